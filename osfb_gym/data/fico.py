r"""The FICO TransRisk tables (Hardt, Price and Srebro 2016; Liu et al. 2018) as a checked record.

``load("fico")`` reads three files of the ``fico/`` folder:

- ``transrisk_cdf_by_race_ssa.csv``: ``Score`` (TransRisk, 0 to 100) and, per
  group, the cumulative percentage of the group at or below that score;
- ``transrisk_performance_by_race_ssa.csv``: the same score grid and, per
  group, the percentage of *defaulters* ("bad" accounts) at that score. The
  tables' ``SOURCE.md`` calls them non-defaulters, but the values fall from
  about 99% at score 0 to about 1% at score 100, and every user of the
  tables (Hardt et al.'s and Liu et al.'s code) reads the repayment
  probability as ``1 - value / 100``; so does this reader;
- ``totals.csv``: one row ``SSA`` with each group's number of people.

The groups are the columns ``Non- Hispanic white``, ``Black``, ``Hispanic``
and ``Asian`` (named ``White``, ``Black``, ``Hispanic``, ``Asian`` here).
Every check a dataset gets applies: the header, a finite number in every
field, the score grid strictly increasing inside [0, 100] and the same in
both tables, each CDF non-decreasing inside [0, 100] and ending at 100,
each default percentage inside [0, 100], group totals positive integers.
A failure raises :class:`~osfb_gym.data.DataFormatError` naming the file,
line and column. The default percentage is *not* required to fall with the
score: the Black and Asian columns rise by up to 0.3 points at 20 of the
198 scores (the published tables' noise), and the tables are used as
published.

:func:`transrisk_to_fico` maps a TransRisk score to the FICO range 300-850,
as Liu et al. (2018) do before applying their score changes (+75 on
repayment, -150 on default, which are FICO points): piecewise linear
through the national FICO score distribution they use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from osfb_gym.data.checks import check_header, fail, read_text, select, split_rows, typed_frame

FICO_FILES = (
    "transrisk_cdf_by_race_ssa.csv",
    "transrisk_performance_by_race_ssa.csv",
    "totals.csv",
)
#: the groups' column names in the files, and the names used here
FILE_COLUMNS = {
    "White": "Non- Hispanic white",
    "Black": "Black",
    "Hispanic": "Hispanic",
    "Asian": "Asian",
}
GROUPS = tuple(FILE_COLUMNS)
# The national FICO score distribution Liu et al. map TransRisk percentiles
# through: the share (%) of people in each 50-point band from 300 to 850.
_FICO_BANDS = (2.1, 4.2, 5.4, 6.5, 7.9, 9.6, 12.0, 13.8, 17.0, 15.8, 5.7)
_FICO_EDGES = np.arange(300.0, 851.0, 50.0)
_PERCENTILE_EDGES = np.concatenate([[0.0], np.cumsum(_FICO_BANDS)])
# a CDF's last value may differ from 100 by the tables' rounding (two decimals)
_CDF_END_TOLERANCE = 0.01


def transrisk_to_fico(score: Any) -> np.ndarray:
    """Map TransRisk scores (0-100) to FICO scores (300-850), Liu et al.'s conversion.

    A TransRisk score is read as a percentile of the national FICO
    distribution (the shares of its 50-point bands), so the map is linear
    inside each band.

    Examples
    --------
    >>> transrisk_to_fico([0.0, 2.1, 50.0, 100.0]).round(1).tolist()
    [300.0, 350.0, 658.3, 850.0]
    """
    return np.interp(np.asarray(score, dtype=float), _PERCENTILE_EDGES, _FICO_EDGES)


@dataclass(frozen=True)
class FicoTables:
    """The TransRisk tables: score distributions and repayment probabilities of four groups.

    Attributes
    ----------
    name
        The name ``load`` knows it by (``"fico"``).
    scores
        The TransRisk score grid, ``(S,)`` strictly increasing in [0, 100].
    groups
        The group names, in the order of the rows below.
    cdf
        ``(G, S)``: the share of each group at or below each score, in [0, 1].
    repay
        ``(G, S)``: the probability that a member of the group with that
        score repays, ``1 - defaulters / 100``.
    totals
        ``(G,)``: the number of people of each group in the tables.
    metadata
        Provenance, as for :class:`~osfb_gym.data.Dataset`.
    """

    name: str
    scores: np.ndarray
    groups: tuple[str, ...]
    cdf: np.ndarray
    repay: np.ndarray
    totals: np.ndarray
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def pmf(self) -> np.ndarray:
        """Return ``(G, S)``: the share of each group at each score (first differences of ``cdf``).

        The first score keeps the CDF's first value, and each row is scaled
        to sum to exactly 1 (the tables' last value is 100% up to rounding).
        """
        mass = np.diff(self.cdf, axis=1, prepend=0.0)
        return mass / mass.sum(axis=1, keepdims=True)

    def index(self, groups: Sequence[str]) -> list[int]:
        """Return the rows of ``groups``; a ``ValueError`` names the known groups."""
        rows = []
        for group in groups:
            if group not in self.groups:
                raise ValueError(
                    f"groups must be names among {', '.join(self.groups)}, got {group!r}"
                )
            rows.append(self.groups.index(group))
        return rows


def _score_table(path: Path, what: str) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Read a ``Score,<group>...`` table: the scores, ``(S, G)`` values in percent, line numbers."""
    content = f"comma-separated rows: Score and {what} for {', '.join(FILE_COLUMNS.values())}"
    rows = split_rows(read_text(path, content), path, sep=",", n_fields=None)
    columns = ["Score", *FILE_COLUMNS.values()]
    header, body = check_header(rows, columns)
    frame = typed_frame(
        select(body, header, columns), columns, numeric=columns, domains={}, header_expected=True
    )
    scores = frame["Score"].to_numpy()
    values = frame[list(FILE_COLUMNS.values())].to_numpy().T
    lines = body.lines
    outside = (scores < 0) | (scores > 100)
    if outside.any():
        row = int(np.flatnonzero(outside)[0])
        fail(path, f"score {scores[row]:g}", "a TransRisk score in [0, 100]", lines[row], "Score")
    steps = np.diff(scores)
    if (steps <= 0).any():
        row = int(np.flatnonzero(steps <= 0)[0]) + 1
        fail(
            path,
            f"score {scores[row]:g} after {scores[row - 1]:g}",
            "strictly increasing scores",
            lines[row],
            "Score",
        )
    for g, column in enumerate(FILE_COLUMNS.values()):
        bad = (values[g] < 0) | (values[g] > 100)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            fail(path, f"{values[g, row]:g}", "a percentage in [0, 100]", lines[row], column)
    return scores, values, lines


def _check_cdf(path: Path, cdf: np.ndarray, lines: list[int]) -> None:
    for g, column in enumerate(FILE_COLUMNS.values()):
        falls = np.diff(cdf[g]) < 0
        if falls.any():
            row = int(np.flatnonzero(falls)[0]) + 1
            fail(
                path,
                f"{cdf[g, row]:g} after {cdf[g, row - 1]:g}",
                "a cumulative percentage that never decreases",
                lines[row],
                column,
            )
        if abs(cdf[g, -1] - 100.0) > _CDF_END_TOLERANCE:
            fail(
                path,
                f"{cdf[g, -1]:g} at the last score",
                "100 (the whole group)",
                lines[-1],
                column,
            )


def _totals(path: Path) -> np.ndarray:
    content = f"a header Kind,{','.join(FILE_COLUMNS.values())} and a row SSA of group sizes"
    rows = split_rows(read_text(path, content), path, sep=",", n_fields=None)
    columns = ["Kind", *FILE_COLUMNS.values()]
    header, body = check_header(rows, columns)
    frame = typed_frame(
        select(body, header, columns),
        columns,
        numeric=list(FILE_COLUMNS.values()),
        domains={},
        header_expected=True,
    )
    kinds = frame["Kind"].tolist()
    if "SSA" not in kinds:
        fail(
            path, f"no row SSA (found {', '.join(kinds)})", "a row SSA of group sizes", None, "Kind"
        )
    row = kinds.index("SSA")
    values = frame[list(FILE_COLUMNS.values())].to_numpy()[row]
    for value, column in zip(values, FILE_COLUMNS.values(), strict=True):
        if value <= 0 or value != int(value):
            fail(path, f"{value:g}", "a positive whole number of people", body.lines[row], column)
    return values.astype(np.int64)


def read_fico(paths: Sequence[Path], name: str = "fico") -> FicoTables:
    r"""Read and check the three TransRisk files into a :class:`FicoTables` record.

    Parameters
    ----------
    paths
        The CDF, performance and totals files, in the order of ``FICO_FILES``.
    name
        The record's name.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> head = "Score,Non- Hispanic white,Black,Hispanic,Asian\n"
    >>> _ = (folder / "cdf.csv").write_text(head + "0,10,50,20,5\n100,100,100,100,100\n")
    >>> _ = (folder / "perf.csv").write_text(head + "0,90,95,92,80\n100,1,2,1,1\n")
    >>> _ = (folder / "totals.csv").write_text("Kind,Non- Hispanic white,Black,Hispanic,Asian\n"
    ...                                        "SSA,100,20,15,8\n")
    >>> tables = read_fico([folder / "cdf.csv", folder / "perf.csv", folder / "totals.csv"])
    >>> tables.groups, tables.repay[1].round(6).tolist(), tables.pmf()[1].tolist()
    (('White', 'Black', 'Hispanic', 'Asian'), [0.05, 0.98], [0.5, 0.5])
    """
    cdf_path, performance_path, totals_path = (Path(path) for path in paths)
    scores, cdf, lines = _score_table(cdf_path, "the cumulative % of each group")
    _check_cdf(cdf_path, cdf, lines)
    performance_scores, defaulters, performance_lines = _score_table(
        performance_path, "the % of defaulters of each group"
    )
    if performance_scores.shape != scores.shape or not np.array_equal(performance_scores, scores):
        size = min(performance_scores.size, scores.size)
        differ = np.flatnonzero(performance_scores[:size] != scores[:size])
        row = int(differ[0]) if differ.size else size
        line = performance_lines[min(row, len(performance_lines) - 1)]
        fail(
            performance_path,
            f"a score grid of {performance_scores.size} scores that differs at row {row + 1}",
            f"the {scores.size} scores of {cdf_path.name}",
            line,
            "Score",
        )
    totals = _totals(totals_path)
    return FicoTables(
        name=name,
        scores=scores,
        groups=GROUPS,
        cdf=np.clip(cdf / 100.0, 0.0, 1.0),
        repay=1.0 - defaulters / 100.0,
        totals=totals,
        metadata={
            "rows": int(scores.size),
            "groups": list(GROUPS),
            "preprocessing": "none: the tables as published; repayment probability = "
            "1 - (% defaulters) / 100; a group's score distribution = first differences "
            "of its CDF.",
        },
    )
