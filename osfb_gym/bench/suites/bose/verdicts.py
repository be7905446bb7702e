"""The verdicts of ``bose-services``: AcQUIre against uniform acquisition, paired by world.

Every agent of a setting plays the same worlds (seed ``s`` fixes the world and
the agents' draws), so each comparison is paired by seed and read by
:func:`osfb_gym.stats.paired` (exact sign-flip test of the mean difference);
one :class:`~osfb_gym.stats.Page` holds every comparison the page prints and
applies Holm's correction over all of them. The paper's claims are read from
those verdicts with :mod:`osfb_gym.stats.claims`.

The comparisons, all on loss (lower is better):

- per curve setting, AcQUIre against Uniform on the total loss at the largest k;
- per grouped setting and k: AcQUIre against Uniform on each group's average
  loss and on the fairness objective (the largest group loss), and Fair
  AcQUIre against group-balanced uniform on the fairness objective.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from osfb_gym.stats import Page, Verdict, claims, paired

ACQUIRE, UNIFORM = "AcQUIre", "Uniform"
FAIR, BALANCED = "Fair AcQUIre", "Group-balanced uniform"


@dataclass(frozen=True)
class Tested:
    """One comparison of the page: where it is (setting, k, what) and its index on the page."""

    setting: str
    k: int
    what: str  # "total loss", "fairness objective", "fair: fairness objective", "group <g>"
    index: int


def _pairs(frame: pd.DataFrame, column: str, a: str, b: str) -> tuple[np.ndarray, np.ndarray]:
    """Return ``column`` of agents ``a`` and ``b`` on the seeds where both have a value."""
    wide = frame.pivot_table(column, "seed", "agent", dropna=False)
    if a not in wide or b not in wide:
        return np.empty(0), np.empty(0)
    both = wide[[a, b]].dropna()
    return both[a].to_numpy(float), both[b].to_numpy(float)


def _add(
    page: Page,
    tested: list[Tested],
    where: tuple[str, int, str],
    frame: pd.DataFrame,
    column: str,
    sides: tuple[str, str],
) -> None:
    """Add ``sides[0]`` against ``sides[1]`` on ``column``, paired by seed (if both ran)."""
    x, y = _pairs(frame, column, *sides)
    if x.size:
        verdict = paired(x, y, lower_is_better=True, names=sides)
        tested.append(Tested(*where, page.add(verdict)))


def build(curves: pd.DataFrame, fairness: pd.DataFrame, top: int) -> tuple[Page, list[Tested]]:
    """Add every comparison of the page, in the page's order; return the page and its index.

    ``curves``: the report's long curves (setting, seed, agent, k, total_loss);
    ``fairness``: the fairness frame (setting, seed, agent, k, fairness, group columns).
    """
    page, tested = Page(), list[Tested]()
    plain, fair = (ACQUIRE, UNIFORM), (FAIR, BALANCED)
    for setting, part in curves[curves["k"] == top].groupby("setting", sort=False):
        _add(page, tested, (setting, top, "total loss"), part, "total_loss", plain)
    for (setting, k), part in fairness.groupby(["setting", "k"], sort=False):
        for column in [c for c in part if c.startswith("group ") and part[c].notna().any()]:
            _add(page, tested, (setting, k, column), part, column, plain)
        _add(page, tested, (setting, k, "fairness objective"), part, "fairness", plain)
        _add(page, tested, (setting, k, "fair: fairness objective"), part, "fairness", fair)
    return page, tested


def _group_line(verdicts: Sequence[Verdict], names: Sequence[str]) -> str:
    """``"AcQUIre clearly lower for 3 of 4 groups, tied for 1 (group 3), clearly higher for 0"``."""
    lower = [n for v, n in zip(verdicts, names, strict=True) if v.winner == ACQUIRE]
    higher = [n for v, n in zip(verdicts, names, strict=True) if v.winner == UNIFORM]
    tied = [n for n in names if n not in lower and n not in higher]
    parts = [f"AcQUIre clearly lower for {len(lower)} of {len(names)} groups"]
    parts.append(f"tied for {len(tied)}" + (f" ({', '.join(tied)})" if tied else ""))
    parts.append(
        f"clearly higher for {len(higher)}" + (f" ({', '.join(higher)})" if higher else "")
    )
    return ", ".join(parts)


def section(page: Page, tested: Sequence[Tested], names: Mapping[str, Sequence[str]]) -> list[str]:
    """Return the page's verdict section: the rule, each comparison, the paper's claims read."""
    verdicts = page.verdicts
    finals = [(t.setting, verdicts[t.index]) for t in tested if t.what == "total loss"]
    lines = [
        "## Verdicts: AcQUIre against uniform acquisition",
        "Paired by seed (every agent plays the same worlds). " + page.sentence,
        f"Total loss at the largest k (k = {tested[0].k if tested else '-'}), AcQUIre against "
        "Uniform:",
        "\n".join(f"- {setting}: {verdict.text}" for setting, verdict in finals),
    ]
    grouped = []
    for setting, k in dict.fromkeys((t.setting, t.k) for t in tested if t.what != "total loss"):
        here = [t for t in tested if (t.setting, t.k) == (setting, k)]
        groups = [t for t in here if t.what.startswith("group ")]
        labels = [_group_name(t.what, names.get(setting)) for t in groups]
        parts = [_group_line([verdicts[t.index] for t in groups], labels)] if groups else []
        fair = "Fair AcQUIre against group-balanced uniform, "
        parts += [
            f"\n    - {fair if t.what.startswith('fair:') else ''}fairness objective: "
            + verdicts[t.index].text
            for t in here
            if not t.what.startswith("group ")
        ]
        grouped.append(f"- {setting}, k = {k}: " + "".join(parts))
    if grouped:
        lines += ["Per group and on the fairness objective (eq. 3):", "\n".join(grouped)]
    lines += ["The paper's statements, read from these verdicts:", claims_table(verdicts, tested)]
    return lines


def _group_name(what: str, names: Sequence[str] | None) -> str:
    index = int(what.split()[1])
    return names[index] if names is not None and index < len(names) else what


#: the paper's statements: text, the comparisons' ``what`` prefix, the side it says wins,
#: and whether it is stated for the census only
STATEMENTS = (
    ("AcQUIre's total loss is below Uniform's (largest k)", "total loss", ACQUIRE, False),
    ("Census: AcQUIre lowers every group's average loss", "group ", ACQUIRE, True),
    ("Census: AcQUIre lowers the fairness objective", "fairness objective", ACQUIRE, True),
    ("Fair AcQUIre lowers the fairness objective against group-balanced uniform",
     "fair: fairness objective", FAIR, False),
)  # fmt: skip


def claims_table(verdicts: Sequence[Verdict], tested: Sequence[Tested]) -> str:
    """Return the paper's statements as a table: statement, comparisons counted, reading.

    A statement reads "reproduced" only when every comparison it rests on names
    the side it says wins (:func:`osfb_gym.stats.claims.combine`).
    """
    rows = []
    for text, what, side, census_only in STATEMENTS:
        found = [
            verdicts[t.index]
            for t in tested
            if t.what.startswith(what) and (t.setting.startswith("census") or not census_only)
        ]
        if found:
            readings = [claims.read([v], [side]) for v in found]
            count = claims.count(readings, needed=len(found))[1]
            rows.append((text, count, claims.combine(readings)))
    frame = pd.DataFrame(rows, columns=["statement", "comparisons", "reading"])
    return frame.to_markdown(index=False)
