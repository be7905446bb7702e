"""Markdown tables of benchmark results."""

from __future__ import annotations

import pandas as pd


def summary_table(results: pd.DataFrame, metric: str = "cumulative_loss") -> str:
    """Return a markdown table of ``metric``: mean +- std over seeds, per setting and agent.

    Examples
    --------
    >>> frame = pd.DataFrame({"setting": ["a", "a"], "agent": ["G", "G"], "seed": [0, 1],
    ...                       "cumulative_loss": [1.0, 3.0], "approval_rate": [0.5, 0.5]})
    >>> print(summary_table(frame))
    | setting   | agent   | cumulative_loss   |   approval_rate |   seeds |
    |:----------|:--------|:------------------|----------------:|--------:|
    | a         | G       | 2.00 ± 1.41       |             0.5 |       2 |
    """
    grouped = results.groupby(["setting", "agent"], sort=False)
    mean, std = grouped[metric].mean(), grouped[metric].std()
    table = pd.DataFrame(
        {
            metric: [f"{m:.2f} ± {s:.2f}" for m, s in zip(mean, std.fillna(0.0), strict=True)],
        },
        index=mean.index,
    )
    if "approval_rate" in results:
        table["approval_rate"] = grouped["approval_rate"].mean().round(3)
    table["seeds"] = grouped["seed"].count()
    return table.reset_index().to_markdown(index=False)
