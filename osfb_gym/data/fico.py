"""FICO (TransRisk) score tables by group, and individuals simulated from them.

The tables (Hardt, Price and Srebro 2016, from the Federal Reserve's 2007
report) are aggregates, not rows: for each score level and each of four
groups, the cumulative share of the group at or below that score and the
share that defaulted. :meth:`FicoTables.sample` draws applicants from them:
a group in proportion to the group totals, a score from that group's score
distribution, and repayment with the tabulated probability.

Note on the performance file: its values fall from about 99 at score 0 to
about 1 at score 100, so they are the percentage of *defaulters* at each
score, as Hardt's own reader treats them (``repay = 1 - value / 100``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from osfb_gym.core.validation import check_int
from osfb_gym.data.checks import DataFormatError, check_header, read_text, split_rows, typed_frame
from osfb_gym.data.dataset import Dataset, from_arrays

# Hardt's files spell the first group "Non- Hispanic white".
_GROUP_NAMES = {"Non- Hispanic white": "White"}


@dataclass(frozen=True)
class FicoTables:
    """Score distribution and repayment probability per group.

    Attributes
    ----------
    scores
        The ``k`` score levels, increasing, in [0, 100].
    groups
        The group names, in the files' order.
    cdf
        ``(k, g)`` share of each group with a score at or below each level.
    repay
        ``(k, g)`` probability that an applicant with that score and group repays.
    totals
        ``(g,)`` number of people of each group in the source sample.
    metadata
        Provenance, as for :class:`~osfb_gym.data.Dataset`.
    """

    scores: np.ndarray
    groups: tuple[str, ...]
    cdf: np.ndarray
    repay: np.ndarray
    totals: np.ndarray
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def pmf(self) -> np.ndarray:
        """``(k, g)`` probability of each score level within each group."""
        mass = np.diff(self.cdf, axis=0, prepend=0.0)
        return mass / mass.sum(axis=0)

    def score_moments(self) -> tuple[float, float]:
        """Mean and standard deviation of the score over the whole population."""
        weights = self.pmf @ (self.totals / self.totals.sum())
        mean = float(weights @ self.scores)
        return mean, float(np.sqrt(weights @ (self.scores - mean) ** 2))

    def sample(self, n: int, rng: np.random.Generator | int | None = None) -> Dataset:
        """Simulate ``n`` applicants as a :class:`~osfb_gym.data.Dataset`.

        Parameters
        ----------
        n
            Number of applicants.
        rng
            A generator or a seed for :func:`numpy.random.default_rng`.

        Returns
        -------
        Dataset
            Features ``score`` (standardised with the population's mean and
            standard deviation, so the scale does not depend on the sample)
            and one ``group=<name>`` indicator per group; ``y = 1`` if the
            applicant repays, drawn with the tabulated probability.

        Examples
        --------
        >>> tables = FicoTables(
        ...     scores=np.array([0.0, 100.0]), groups=("A", "B"),
        ...     cdf=np.array([[0.5, 0.5], [1.0, 1.0]]),
        ...     repay=np.array([[0.1, 0.2], [0.9, 0.8]]), totals=np.array([1, 1]))
        >>> data = tables.sample(4, rng=0)
        >>> data.feature_names, data.X.shape
        (('score', 'group=A', 'group=B'), (4, 3))
        """
        n = check_int(n, "n", minimum=1)
        generator = np.random.default_rng(rng)
        group = generator.choice(len(self.groups), size=n, p=self.totals / self.totals.sum())
        pmf = self.pmf
        level = np.empty(n, dtype=int)
        for g in range(len(self.groups)):
            members = group == g
            level[members] = generator.choice(len(self.scores), size=members.sum(), p=pmf[:, g])
        repaid = generator.random(n) < self.repay[level, group]
        mean, std = self.score_moments()
        X = np.column_stack([(self.scores[level] - mean) / std, np.eye(len(self.groups))[group]])
        metadata = {
            **self.metadata,
            "preprocessing": "simulated: group ~ group totals, score ~ the group's score "
            "distribution, y ~ Bernoulli(P(repay | score, group)); score standardised with "
            "the population's mean and standard deviation.",
        }
        # A tiny sample may hold one class only; from_arrays then says so.
        return from_arrays(
            X,
            repaid.astype(float),
            name="fico",
            feature_names=["score", *(f"group={name}" for name in self.groups)],
            target="repay",
            metadata=metadata,
        )


def _numeric_table(path: Path, index: str, text: Sequence[str] = ()) -> pd.DataFrame:
    """Read a comma-separated table with a header whose columns but ``text`` are numbers."""
    rows = split_rows(
        read_text(path, "a comma-separated table with a header"), path, sep=",", n_fields=None
    )
    header, data = check_header(rows, (index,))
    numeric = [column for column in header if column not in text]
    frame = typed_frame(data, header, numeric=numeric, domains={}, header_expected=True)
    return frame.set_index(index)


def read_fico(paths: Sequence[Path]) -> FicoTables:
    """Read the three TransRisk files (cdf, performance, totals) into :class:`FicoTables`."""
    cdf_path, performance_path, totals_path = paths
    cdf = _numeric_table(cdf_path, "Score")
    performance = _numeric_table(performance_path, "Score")
    totals = _numeric_table(totals_path, "Kind", text=("Kind",))
    if not cdf.index.equals(performance.index) or list(cdf.columns) != list(performance.columns):
        raise DataFormatError(f"{cdf_path} and {performance_path} must share scores and groups")
    absent = [group for group in cdf.columns if group not in totals.columns]
    if absent:
        raise DataFormatError(f"{totals_path}: no column {absent[0]!r}; expected every group")
    groups = tuple(_GROUP_NAMES.get(name, name.strip()) for name in cdf.columns)
    return FicoTables(
        scores=cdf.index.to_numpy(dtype=float),
        groups=groups,
        cdf=cdf.to_numpy(dtype=float) / 100.0,
        repay=1.0 - performance.to_numpy(dtype=float) / 100.0,
        totals=totals.loc[:, list(cdf.columns)].iloc[0].to_numpy(dtype=float),
        metadata={
            "rows": len(cdf),
            "columns": len(groups),
            "preprocessing": "percentages divided by 100; repay = 1 - performance/100 "
            "(the performance file holds the share of defaulters); group "
            "'Non- Hispanic white' renamed 'White'.",
        },
    )
