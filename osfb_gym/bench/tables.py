"""Markdown tables of benchmark results."""

from __future__ import annotations

import json

import pandas as pd


def _varied(params: pd.Series) -> list[str]:
    """Names of the hyperparameters that take more than one value among ``params`` (JSON)."""
    parsed = [json.loads(text) for text in params.unique()]
    names = dict.fromkeys(name for point in parsed for name in point)
    return [name for name in names if len({json.dumps(p.get(name)) for p in parsed}) > 1]


def tuned(
    results: pd.DataFrame,
    metric: str,
    *,
    lower_is_better: bool = True,
    then: str | None = None,
) -> pd.DataFrame:
    """Pick each agent's best hyperparameters per setting, as the papers tune.

    ``results`` has one row per cell with ``setting``, ``agent``, ``params``
    (JSON text), ``seed`` and ``metric``. For every (setting, agent) the
    setting of the grid with the best mean ``metric`` over its seeds is
    chosen; the rows of that choice are returned, with a ``chosen`` column
    naming the grid values picked (empty when the agent had no grid).

    With ``then`` (a second metric, lower is better) the choice weighs two
    objectives by the one-standard-error rule: among the grid settings whose
    mean ``metric`` is within one standard error (over seeds) of the best
    mean, the one with the lowest mean ``then`` (ties: the better ``metric``).

    Examples
    --------
    >>> frame = pd.DataFrame({"setting": ["s"] * 4, "agent": ["A"] * 4, "seed": [0, 1, 0, 1],
    ...     "params": ['{"alpha": 1}'] * 2 + ['{"alpha": 2}'] * 2, "loss": [3.0, 5.0, 1.0, 2.0]})
    >>> best = tuned(frame, "loss")
    >>> best["chosen"].unique().tolist(), best["loss"].tolist()
    (['alpha=2'], [1.0, 2.0])
    >>> frame["labels"] = [0.9, 0.9, 0.1, 0.1]
    >>> frame["loss"] = [1.0, 1.2, 1.05, 1.25]  # alpha=2 within one s.e. of the best, fewer labels
    >>> tuned(frame, "loss", then="labels")["chosen"].unique().tolist()
    ['alpha=2']
    """
    chosen = []
    for _, group in results.groupby(["setting", "agent"], sort=False):
        by = group.groupby("params", sort=False)
        means = by[metric].mean()
        best = means.idxmin() if lower_is_better else means.idxmax()
        if then is not None:
            sign = 1.0 if lower_is_better else -1.0
            stderr = by[metric].sem().fillna(0.0)
            near = sign * (means - means[best]) <= stderr[best]
            order = pd.DataFrame({"then": by[then].mean(), "metric": sign * means})[near]
            best = order.sort_values(["then", "metric"], kind="stable").index[0]
        rows = group[group["params"] == best].copy()
        point = json.loads(best)
        rows["chosen"] = ", ".join(f"{name}={point.get(name)}" for name in _varied(group["params"]))
        chosen.append(rows)
    return pd.concat(chosen, ignore_index=True)


def tuned_table(
    results: pd.DataFrame,
    metric: str,
    *,
    lower_is_better: bool = True,
    extra: tuple[str, ...] = (),
) -> str:
    """Return a markdown table of each agent's tuned ``metric`` per setting (mean ± std).

    ``extra`` metrics are shown as means of the chosen setting's seeds.
    """
    best = tuned(results, metric, lower_is_better=lower_is_better)
    grouped = best.groupby(["setting", "agent"], sort=False)
    mean, std = grouped[metric].mean(), grouped[metric].std().fillna(0.0)
    table = pd.DataFrame(index=mean.index)
    table["chosen"] = grouped["chosen"].first()
    table[metric] = [f"{m:.4g} ± {s:.2g}" for m, s in zip(mean, std, strict=True)]
    for name in extra:
        if name in best:
            table[name] = grouped[name].mean().round(3)
    table["seeds"] = grouped["seed"].count()
    if not table["chosen"].astype(bool).any():
        table = table.drop(columns="chosen")
    return table.reset_index().to_markdown(index=False)
