"""What the suites' pages share and the engine does not use: subsets, cells, claims, papers.

:func:`subset` checks a suite's ``datasets=``/``families=``-style setting,
:func:`cell` formats a table cell, :class:`Claim` and :func:`claims_table`
tabulate a paper's claims against what was measured, :func:`published`
reads the papers' numbers, CSV files in ``osfb_gym/bench/papers/``, and
:func:`package_toml` a suite's words and protocol beside its code (both
shipped in the wheel). The engine's own report helpers are in
:mod:`osfb_gym.bench.report`.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np
import pandas as pd

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["Claim", "cell", "claims_table", "package_toml", "published", "subset"]


def subset(given: Sequence[str] | None, allowed: Sequence[str], name: str) -> tuple[str, ...]:
    """Return ``given`` (None: ``allowed``) if it is a non-empty subset of ``allowed``; else raise.

    >>> subset(None, ("a", "b"), "datasets"), subset(["b"], ("a", "b"), "datasets")
    (('a', 'b'), ('b',))
    """
    if given is not None and (not given or any(item not in allowed for item in given)):
        raise ValueError(f"{name} must be a non-empty subset of {list(allowed)}, got {list(given)}")
    return tuple(allowed if given is None else given)


def cell(mean: float, spread: float, digits: str = ".4g") -> str:
    """Format a table cell ``mean ± spread``; a spread that is not finite is left out.

    >>> cell(0.12345, 0.0061), cell(3.0, float("nan"), digits=".2f")
    ('0.1235 ± 0.0061', '3.00')
    """
    text = f"{mean:{digits}}"
    return f"{text} ± {spread:{digits}}" if np.isfinite(spread) else text


@dataclass(frozen=True)
class Claim:
    """A paper's claim as measured.

    ``paper`` says what the paper states (None: it does not), ``holds``
    whether the measurement shows it, ``why`` the reason where it does not.
    """

    claim: str
    paper: str | None
    measured: str
    holds: bool
    why: str = ""


def claims_table(claims: Iterable[Claim]) -> str:
    """Markdown table: claim | paper | measured | reproduced? | why.

    "reproduced?" is yes/no where the paper states the claim, and "- (holds)"
    or "- (does not hold)" where it does not (a check of ours).

    >>> print(claims_table([Claim("B beats A", "B lower", "B 1.0, A 2.0", True)]))
    | claim     | paper   | measured     | reproduced?   | why   |
    |:----------|:--------|:-------------|:--------------|:------|
    | B beats A | B lower | B 1.0, A 2.0 | yes           |       |
    """
    rows = [
        {
            "claim": c.claim,
            "paper": c.paper or "not stated",
            "measured": c.measured,
            "reproduced?": ("yes" if c.holds else "no")
            if c.paper is not None
            else ("- (holds)" if c.holds else "- (does not hold)"),
            "why": c.why,
        }
        for c in claims
    ]
    columns = ["claim", "paper", "measured", "reproduced?", "why"]
    return pd.DataFrame(rows, columns=columns).to_markdown(index=False)


def published(name: str, index: Sequence[str] = ()) -> pd.DataFrame:
    """Read the published numbers ``osfb_gym/bench/papers/<name>.csv`` (shipped in the wheel).

    ``index``: the columns that become the frame's index.

    >>> published("jiang_table1", ["dataset", "cutoff"]).loc[("adult", 0.5), "ours"]
    np.float64(144.92)
    """
    folder = resources.files("osfb_gym.bench") / "papers"
    source = folder / f"{name}.csv"
    if not source.is_file():
        found = sorted(p.name[:-4] for p in folder.iterdir() if p.name.endswith(".csv"))
        raise ValueError(f"no published table {name!r}; there are {found}")
    with source.open() as handle:
        frame = pd.read_csv(handle)
    return frame.set_index(list(index)) if index else frame


@functools.cache
def package_toml(package: str, name: str) -> dict[str, Any]:
    """Read ``name`` (a TOML file shipped beside ``package``'s code): a suite's words, its protocol.

    Read once per process; the dict is shared, so treat it as read-only.

    >>> package_toml("osfb_gym.bench.suites.sculley", "protocol.toml")["lockup_recall"]
    0.1
    """
    with (resources.files(package) / name).open("rb") as source:
        return tomllib.load(source)
