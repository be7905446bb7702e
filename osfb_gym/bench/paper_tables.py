"""The published numbers of Jiang, Jiang and Pacchiano (2021), Tables 1 and 2.

Cumulative one-sided loss, mean over 10 random splits, each method at its
best ``alpha`` on a grid of powers of two (greedy untuned), copied from the
paper as printed into ``papers/jiang_table1.csv`` (linear) and
``papers/jiang_table2.csv`` (logistic): a row per ``dataset, cutoff``, a
column per method in :data:`METHODS` order.
"""

from __future__ import annotations

import pandas as pd

from osfb_gym.bench.report import published as _read

METHODS = ("greedy", "eps-greedy", "os-eps-greedy", "noise", "os-noise", "margin", "ours")


def published(link: str) -> pd.DataFrame:
    """Return Table 1 (``link="linear"``) or Table 2 (``"logistic"``) as a frame.

    Index ``(dataset, cutoff)`` with cutoff 0.5 or 0.7; one column per method.

    Examples
    --------
    >>> published("linear").loc[("adult", 0.5), "ours"]
    np.float64(144.92)
    """
    if link not in ("linear", "logistic"):
        raise ValueError(f"link must be 'linear' or 'logistic', got {link!r}")
    frame = _read("jiang_table1" if link == "linear" else "jiang_table2")
    return frame.set_index(["dataset", "cutoff"])[list(METHODS)]
