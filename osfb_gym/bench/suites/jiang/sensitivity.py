"""Which of Jiang's unstated choices moves which cell: one-at-a-time ``fit`` variants.

The paper's text pins down most of section 8's protocol but leaves open the
encoding of categories, the feature scaling, the solver, the alpha range,
how alpha enters Adaptive's width (and what t counts in it) and the ridge of
Adaptive's design matrix A (docs/reproductions/jiang.md). Each
:class:`Variant` changes one of them from the ``"paper"`` fit; every
variant runs as a ``fit`` of the jiang suites (:func:`register` adds them to
``FITS``; :func:`run_variant` runs one), and :func:`sensitivity_table`
compares each variant's cells with the paper fit's: the paired verdict of
the cell (:mod:`osfb_gym.bench.suites.jiang.verdicts`), greedy's loss, and
Adaptive's change on greedy. The variants are read from the text and fixed
in advance, never tuned to the paper's cells, whose numbers the table does
not read.

A variant may run on some of a table's datasets (off the replicas' shared
fit, a solver or ridge the replicas do not take costs hours on the large
ones); each is compared with the paper fit on the same datasets, so both
verdicts correct for the same comparisons. :func:`sensitivity_summary` says
per variant what moved; the command writes both tables::

    python -m osfb_gym.bench.suites.jiang PAPER_DIR NAME=DIR [NAME=DIR ...] [--csv OUT]
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pandas as pd

from osfb_gym.bench import suites
from osfb_gym.bench.driver import RunOptions
from osfb_gym.bench.report import Report, tuned
from osfb_gym.bench.suites.jiang.analysis import _cells
from osfb_gym.bench.suites.jiang.settings import FITS, JIANG_SUITES
from osfb_gym.bench.suites.jiang.verdicts import NO_EXPLORATION, cell_text, cell_verdicts

__all__ = [
    "VARIANTS",
    "Variant",
    "main",
    "register",
    "run_variant",
    "sensitivity_summary",
    "sensitivity_table",
    "variant_fit",
]


@dataclass(frozen=True)
class Variant:
    """One unstated choice read another way: the ``fit`` changes, or another alpha grid.

    Attributes
    ----------
    name
        The ``fit`` name it runs as.
    choice
        Which unstated choice it changes.
    reading
        How it reads the text instead.
    changes
        Per part of a fit (``env``, ``linear``, ``logistic``, ``ours``), the
        options that replace the paper fit's.
    alphas
        Another grid of every method's alpha (the alpha range), else None.
    """

    name: str
    choice: str
    reading: str
    changes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    alphas: tuple[float, ...] | None = None


VARIANTS: tuple[Variant, ...] = (
    Variant("onehot", "encoding", "categories one-hot (the data layer's default)",
            {"env": {"encoding": "onehot"}}),
    Variant("standard", "scaling", "standard scaling (mean 0, s.d. 1) instead of robust",
            {"env": {"scaling": "standard"}}),
    Variant("onehot-standard", "encoding and scaling", "one-hot and standard scaling",
            {"env": {"encoding": "onehot", "scaling": "standard"}}),
    Variant("exact-solver", "solver", "an exact refit every batch (solver='exact'); "
            "scikit-learn's own solvers are not options of these learners",
            {"linear": {"solver": "exact"}, "logistic": {"solver": "exact"}}),
    Variant("wide-alpha", "alpha range", "alpha in {0, 2^-16, ..., 2^6}",
            alphas=(NO_EXPLORATION, *(2.0**k for k in range(-16, 7)))),
    Variant("constant-rho", "width scaling", "rho_t = rho: alpha is the whole width factor",
            {"ours": {"rho_schedule": "constant"}}),
    Variant("batch-A", "what t counts", "A and t advance per batch, not per applicant",
            {"ours": {"per_applicant_A": False}}),
    Variant("ridge-A", "A's ridge", "A = I + sum x x^T (design_l2 = 1)",
            {"ours": {"design_l2": 1.0}}),
)  # fmt: skip


def variant_fit(base: Mapping[str, Mapping[str, Any]], variant: Variant) -> dict[str, Any]:
    """Return ``base`` (a ``FITS`` entry) with ``variant``'s changes.

    >>> fit = variant_fit(FITS["paper"], VARIANTS[0])
    >>> fit["env"], FITS["paper"]["env"]["encoding"]
    ({'encoding': 'onehot', 'scaling': 'robust'}, 'native')
    """
    fit = copy.deepcopy({part: dict(options) for part, options in base.items()})
    for part, options in variant.changes.items():
        if part not in fit:
            raise ValueError(f"variant {variant.name!r} changes {part!r}, not a part of a fit")
        fit[part].update(options)
    return fit


def register(fits: dict[str, dict[str, dict[str, Any]]] = FITS) -> None:
    """Add every variant that changes the fit to ``fits`` (the suites' ``FITS``) as ``fit=<name>``.

    The alpha-range variant keeps the paper fit and runs with its own grid.
    """
    for variant in VARIANTS:
        if variant.changes:
            fits.setdefault(variant.name, variant_fit(fits["paper"], variant))


def run_variant(
    suite: str,
    variant: str | Variant,
    out_dir: str | Path,
    options: RunOptions | None = None,
    **settings: Any,
) -> Report:
    """Run one variant of jiang suite ``suite`` into ``out_dir`` through the suites' driver.

    ``options`` are the run's flags, ``settings`` fields of the suite's settings;
    the variant's alpha grid replaces ``alphas`` when it has one.
    """
    register()
    found = {v.name: v for v in VARIANTS}
    chosen = found.get(variant) if isinstance(variant, str) else variant
    if chosen is None or chosen.name not in found:
        name = variant if isinstance(variant, str) else variant.name
        raise ValueError(f"variant must be one of {sorted(found)}, got {name!r}")
    if suite not in JIANG_SUITES:
        raise ValueError(f"suite must be one of {sorted(JIANG_SUITES)}, got {suite!r}")
    if chosen.alphas is not None:
        settings["alphas"] = chosen.alphas
    fit = "paper" if chosen.alphas else chosen.name
    return cast("Report", suites.run(suite, out_dir, options, fit=fit, **settings))


def _cells_of(results: pd.DataFrame) -> tuple[dict[tuple[str, float], str], pd.DataFrame]:
    """Return each cell's verdict text and the tuned mean loss per (dataset, cutoff, method)."""
    rows = _cells(results.drop_duplicates(subset=["key"]).reset_index(drop=True))
    best = tuned(rows, "cumulative_loss")
    page, index = cell_verdicts(best)
    bests = page.bests
    texts = {key: cell_text(bests[i]) for key, i in index.items()}
    means = best.groupby(["dataset", "cutoff", "method"])["cumulative_loss"].mean()
    return texts, means.unstack("method")


def _verdict_word(text: str) -> str:
    """Return a verdict without its interval: "clearly ours" or "tied: margin, ours"."""
    if text.startswith("clearly lowest: "):
        return "clearly " + text.removeprefix("clearly lowest: ").split(" (", 1)[0]
    # (the prefix holds " (" itself, so the interval is cut after it)
    head = text.removeprefix("tied (within noise): ").split(" (", 1)[0]
    best, _, others = head.partition(" with ")
    return "tied: " + ", ".join(sorted([best, *others.split(", ")]) if others else [best])


def sensitivity_table(paper: pd.DataFrame, variants: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Return a row per (variant, cell): the verdicts, greedy's loss and Adaptive on greedy.

    Parameters
    ----------
    paper
        The engine's rows (``results.csv``) of the paper fit.
    variants
        Variant name -> the engine's rows of that variant on the same cells,
        or on some of the datasets: the paper fit's verdicts are then read
        from its rows on those datasets (Holm over the same comparisons).

    Returns
    -------
    pd.DataFrame
        Columns: variant, choice, cell, verdict (paper fit), verdict (variant),
        moved (the set of lowest or tied methods changed), greedy (variant /
        paper fit), ours on greedy (paper fit -> variant).
    """
    known = {v.name: v for v in VARIANTS}
    rows = []
    for name, results in variants.items():
        if name not in known:
            raise ValueError(f"variants must be named after VARIANTS {sorted(known)}, got {name!r}")
        texts, means = _cells_of(results)
        datasets = {dataset for dataset, _ in texts}
        base_texts, base_means = _cells_of(paper[_dataset_of(paper).isin(datasets)])
        for key in (k for k in base_texts if k in texts):
            before, after = _verdict_word(base_texts[key]), _verdict_word(texts[key])
            b, a = base_means.loc[key], means.loc[key]
            rows.append(
                {
                    "variant": name,
                    "choice": known[name].choice,
                    "cell": f"{key[0]} {key[1]:.0%}",
                    "verdict (paper fit)": before,
                    "verdict (variant)": after,
                    "moved": "yes" if before != after else "",
                    "greedy (variant / paper fit)": f"x{a['greedy'] / b['greedy']:.2f}",
                    "ours on greedy": f"{b['ours'] / b['greedy'] - 1:+.0%} -> "
                    f"{a['ours'] / a['greedy'] - 1:+.0%}",
                }
            )
    return pd.DataFrame(rows)


def _dataset_of(results: pd.DataFrame) -> pd.Series:
    """Return each engine row's dataset (read from its ``env_kwargs``)."""
    return results["env_kwargs"].map(lambda text: json.loads(text)["dataset"])


def sensitivity_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Return a row per variant of :func:`sensitivity_table`: what moved, and where to.

    Columns: variant, choice, cells (moved of compared), clearly ours (paper
    fit -> variant), another method clearly lowest, ours no longer tied for
    lowest, greedy (variant / paper fit), its range over the cells.
    """
    rows = []
    for name, cells in table.groupby("variant", sort=False):
        before, after = cells["verdict (paper fit)"], cells["verdict (variant)"]
        other = cells[after.str.startswith("clearly") & ~after.str.contains("ours")]
        lost = cells[before.str.contains("ours") & ~after.str.contains("ours")]
        scale = cells["greedy (variant / paper fit)"].str[1:].astype(float)
        rows.append(
            {
                "variant": name,
                "choice": cells["choice"].iloc[0],
                "cells moved": f"{(cells['moved'] == 'yes').sum()} of {len(cells)}",
                "clearly ours": f"{before.str.startswith('clearly ours').sum()} -> "
                f"{after.str.startswith('clearly ours').sum()}",
                "another method clearly lowest": ", ".join(
                    f"{cell} ({verdict.removeprefix('clearly ')})"
                    for cell, verdict in zip(other["cell"], other["verdict (variant)"], strict=True)
                )
                or "none",
                "ours no longer among the lowest": ", ".join(lost["cell"]) or "none",
                "greedy (variant / paper fit)": f"x{scale.min():.2f}"
                + ("" if scale.min() == scale.max() else f" to x{scale.max():.2f}"),
            }
        )
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    """Print the summary and the per-cell table of stored runs as Markdown (see the module)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m osfb_gym.bench.suites.jiang",
        description="Compare stored jiang runs of the sensitivity variants with the paper fit.",
    )
    parser.add_argument("paper", help="the output folder of the paper fit's run")
    parser.add_argument("variants", nargs="+", metavar="NAME=DIR", help="a variant's run")
    parser.add_argument("--csv", help="also write the per-cell table to this CSV file")
    args = parser.parse_args(argv)
    for item in args.variants:
        if "=" not in item:
            parser.error(f"a variant is NAME=DIR (e.g. onehot=runs/onehot), got {item!r}")
    stores = dict(item.partition("=")[::2] for item in args.variants)
    frames = {}
    for folder in (args.paper, *stores.values()):
        path = Path(folder) / "results.csv"
        if not path.is_file():
            parser.error(f"no results.csv in {folder!r}: not the output folder of a jiang run")
        frames[folder] = pd.read_csv(path)
    try:
        table = sensitivity_table(
            frames[args.paper], {name: frames[folder] for name, folder in stores.items()}
        )
    except ValueError as error:
        parser.error(str(error))
    if args.csv:
        table.to_csv(args.csv, index=False)
    print(sensitivity_summary(table).to_markdown(index=False), end="\n\n")
    print(table.to_markdown(index=False))
    return 0
