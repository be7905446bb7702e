"""The per-run scores of ``rl-vs-principled``: normalised regret, scores.csv, rliable, leaderboard.

``scores.csv`` is tidy (one row per run x checkpoint x agent x cell), so
``pandas.read_csv`` reads it (:func:`read_scores` with the columns' types) and
:func:`score_matrix` turns it into rliable's ``{algorithm: array(runs, tasks)}``.
Its columns (:data:`COLUMNS`):

``format_version``
    The layout of this file (:data:`FORMAT_VERSION`).
``protocol_version``
    The protocol that produced the row (:data:`.protocol.PROTOCOL_VERSION`); a
    leaderboard holds rows of one protocol version only.
``family``, ``regime``, ``env_id``
    The cell: the env family, ``fixed`` / ``resampled`` / ``dynamic``, the id played.
``algorithm``, ``kind``, ``view``, ``config``
    The agent (RL as ``ALGO+O<view>``), ``rl`` / ``principled`` / ``extra`` (a
    user's agent), the RL observation view (empty for the others) and its
    hyperparameters (JSON).
``run``
    The run seed (run s of every agent plays the same held-out episodes, and in the
    fixed and dynamic regimes the same world).
``budget``, ``trained_to``, ``selected``
    The checkpoint N (env steps of experience when scored; 0 before any), the
    run's last checkpoint, and whether validation chose this configuration at N.
``objective``, ``oracle``, ``constant_objective``
    The family objective of the held-out episodes (mean), the oracle's, and the
    best constant action's (chosen on validation episodes).
``regret``, ``normalised``
    Raw regret per held-out episode (the family's units, lower is better) and
    ``(objective - oracle) / (constant - oracle)`` (0 oracle, 1 best constant);
    empty (NaN) where the best constant is no worse than the oracle on the run's
    held-out episodes (a world where doing one thing always is optimal): there is no
    gap to normalise by, and the run counts in no aggregate or verdict.
``train_regret``, ``total_regret``, ``total_normalised``
    Regret paid over the N experience steps, that plus one held-out episode, and
    that over the best constant's regret over the same steps (empty as ``normalised``).
``steps_per_episode``
    Steps of a held-out episode.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from osfb_gym.bench.suites.rl_vs_principled.protocol import NAME, PROTOCOL_VERSION, choose, scored
from osfb_gym.core.family import family_of

#: the layout of scores.csv (bump when a column changes meaning or goes)
FORMAT_VERSION = 1
#: the columns of scores.csv, in order
COLUMNS = (
    "format_version",
    "protocol_version",
    "family",
    "regime",
    "env_id",
    "algorithm",
    "kind",
    "view",
    "config",
    "run",
    "budget",
    "trained_to",
    "selected",
    "objective",
    "oracle",
    "constant_objective",
    "regret",
    "normalised",
    "train_regret",
    "total_regret",
    "total_normalised",
    "steps_per_episode",
)
#: the columns naming one score (a leaderboard keeps the newest row of each)
KEY = ("family", "regime", "algorithm", "config", "run", "budget", "trained_to")


def best_constants(validation: pd.DataFrame) -> dict[tuple[str, str], str]:
    """Return the best constant action per (family, regime), chosen on validation episodes.

    The action with the best mean objective over the validation runs' episodes (JSON text
    of the action).
    """
    means: dict[tuple[str, str], dict[str, list[float]]] = {}
    for row in validation[validation["agent"] == "constant"].itertuples():
        key = (str(row.setting).removesuffix("-dynamic"), json.loads(row.params)["regime"])
        sign = 1 if family_of(row.env_id).lower_is_better else -1
        for entry in row.constants:
            action = json.dumps(entry["action"])
            means.setdefault(key, {}).setdefault(action, []).append(
                sign * float(np.mean(entry["objective"]))
            )
    return {key: min(found, key=lambda a: np.mean(found[a])) for key, found in means.items()}


def normalise(test: pd.DataFrame, validation: pd.DataFrame | None = None) -> pd.DataFrame:
    """Return the test points with normalised regret and total regret over N + T steps.

    Normalised: ``(metric - oracle) / (best constant - oracle)``, 0 the oracle, 1 the
    best constant action, chosen on the validation episodes (:func:`best_constants`;
    without validation constants, per run on the test episodes) and scored on the test ones.
    """
    chosen = best_constants(validation) if validation is not None else {}
    constants = []
    for row in test[test["agent"] == "constant"].itertuples():
        family, regime = str(row.setting).removesuffix("-dynamic"), json.loads(row.params)["regime"]
        sign = 1 if family_of(row.env_id).lower_is_better else -1
        pick = chosen.get((family, regime))
        best = (
            next(c for c in row.constants if json.dumps(c["action"]) == pick)
            if pick is not None
            else min(row.constants, key=lambda c: np.mean(c["objective"]) * sign)  # noqa: B023
        )
        constants.append(
            {
                "family": family,
                "regime": regime,
                "seed": row.seed,
                "constant": json.dumps(best["action"]),
                "constant_objective": float(np.mean(best["objective"])),
                "constant_regret": float(np.mean(best["regret"])),
            }
        )
    frame = scored(test).merge(pd.DataFrame(constants), on=["family", "regime", "seed"])
    # the constant's regret has the sign of its gap to the oracle in the regret's direction:
    # where it is not positive the gap is empty (or reversed) and the ratios mean nothing
    gap = frame["constant_regret"] > 0
    span = frame["constant_objective"] - frame["oracle"]
    frame["normalised"] = ((frame["objective"] - frame["oracle"]) / span.where(gap)).astype(float)
    frame["total_regret"] = frame["train_regret"] + frame["regret"]
    episodes = frame["budget"] / frame["steps_per_episode"] + 1
    paid = episodes * frame["constant_regret"].where(gap)
    frame["total_normalised"] = (frame["total_regret"] / paid).astype(float)
    return frame


def undefined_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """Return the (family, regime, run)s with no normalised regret (:func:`normalise`)."""
    rows = frame.rename(columns={"seed": "run"})
    gone = rows[rows["normalised"].isna()]
    return gone[["family", "regime", "run"]].drop_duplicates().reset_index(drop=True)


def best_principled(validation: pd.DataFrame) -> dict[tuple[str, str, int], str]:
    """Return the validation-best principled agent per (family, regime, budget)."""
    chosen = choose(validation)
    principled = chosen[chosen["kind"] == "principled"].sort_values("regret")
    return principled.groupby(["family", "regime", "budget"])["agent"].first().to_dict()


def tidy(points: pd.DataFrame) -> pd.DataFrame:
    """Return ``scores.csv`` from the report's normalised test points (one row each)."""
    frame = points.rename(columns={"agent": "algorithm", "seed": "run"})
    keys = ["family", "regime", "algorithm", "config", "run"]
    frame = frame.assign(
        format_version=FORMAT_VERSION,
        protocol_version=PROTOCOL_VERSION,
        trained_to=frame.groupby(keys)["budget"].transform("max"),
        view=frame["view"].fillna(""),
    )
    return frame.loc[:, list(COLUMNS)].reset_index(drop=True)


def score_matrix(
    frame: pd.DataFrame,
    budget: int,
    *,
    column: str = "normalised",
    algorithms: Sequence[str] | None = None,
    regimes: Sequence[str] | None = None,
) -> dict[str, np.ndarray]:
    """Return rliable's ``{algorithm: array(runs, tasks)}`` of ``column`` at checkpoint ``budget``.

    ``algorithms`` (default: every one in ``frame``) and ``regimes`` narrow the rows.
    Tasks are the (family, regime) cells every such algorithm has (sorted), runs the
    run seeds every algorithm has on all of them; only the rows validation selected at
    ``budget`` count. Pass it to ``rliable.library.get_interval_estimates``.

    Raises
    ------
    ValueError
        When no row is at ``budget`` (the error names the budgets present) or no task
        is shared by every algorithm.
    """
    if column not in frame:
        raise ValueError(f"column must be one of the frame's columns, got {column!r}")
    rows = frame[(frame["budget"] == budget) & frame["selected"].astype(bool)]
    if regimes is not None:
        rows = rows[rows["regime"].isin(list(regimes))]
    if algorithms is not None:
        rows = rows[rows["algorithm"].isin(list(algorithms))]
    if rows.empty:
        present = sorted(int(b) for b in frame["budget"].unique())
        raise ValueError(f"budget {budget} has no selected rows; the budgets are {present}")
    rows = rows.assign(task=rows["family"] + "/" + rows["regime"])
    tables = {
        str(name): part.pivot_table(index="run", columns="task", values=column)
        for name, part in rows.groupby("algorithm", sort=True)
    }
    tasks = sorted(set.intersection(*(set(t.columns) for t in tables.values())))
    if not tasks:
        raise ValueError(
            "no (family, regime) task is shared by every algorithm; narrow the algorithms "
            f"or regimes (the algorithms: {sorted(tables)})"
        )
    runs = sorted(set.intersection(*(set(t[tasks].dropna().index) for t in tables.values())))
    return {name: table.loc[runs, tasks].to_numpy(dtype=float) for name, table in tables.items()}


def read_scores(path: str | Path) -> pd.DataFrame:
    """Return a ``scores.csv`` (or a leaderboard CSV) with its columns' types.

    An empty ``view`` (a principled agent's) stays ``""``; an empty ``normalised`` or
    ``total_normalised`` (undefined, :func:`normalise`) is NaN.
    """
    frame = pd.read_csv(path, dtype={"algorithm": str, "config": str, "view": str})
    return frame.fillna({"view": ""})


def append_leaderboard(rows: pd.DataFrame, path: str | Path) -> pd.DataFrame:
    """Append ``rows`` (``scores.csv`` rows) to the leaderboard CSV at ``path``; return it.

    A row with the same :data:`KEY` as a stored one replaces it (a re-run). Refuses
    rows of another format or protocol version than the stored ones, naming both.
    """
    path = Path(path)
    missing = [c for c in COLUMNS if c not in rows]
    if missing:
        raise ValueError(f"rows must have the columns of scores.csv; missing {missing}")
    versions = {(int(f), int(p)) for f, p in rows[["format_version", "protocol_version"]].values}
    if len(versions) > 1:
        raise ValueError(f"rows mix format/protocol versions {sorted(versions)}")
    frame = rows.loc[:, list(COLUMNS)]
    if path.exists():
        stored = read_scores(path)
        stamps = stored[["format_version", "protocol_version"]].values
        theirs = {(int(f), int(p)) for f, p in stamps}
        if theirs and theirs != versions:
            raise ValueError(
                f"{path} holds rows of (format, protocol) version {sorted(theirs)}; these rows "
                f"are of {sorted(versions)}: a leaderboard compares one protocol only"
            )
        frame = pd.concat([stored, frame], ignore_index=True)
        frame = frame.drop_duplicates(subset=list(KEY), keep="last")
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return frame


def leaderboard_add(
    agent: str,
    budgets: Sequence[int],
    out: str | Path,
    store: str | Path,
    options: Any = None,
) -> str:
    """Run the protocol for a user's ``module:Class`` agent; append its rows to ``out``.

    The agent plays the principled side's cells (``extra_agents``; the RL side is not
    run again: the released rows hold it) at ``budgets``, into the suite store
    ``store`` (resumable); its ``scores.csv`` rows go to the leaderboard CSV ``out``
    (:func:`append_leaderboard`, which refuses another protocol version). Returns a
    one-paragraph summary.
    """
    from osfb_gym.bench.suites import run

    if not budgets:
        raise ValueError("budget must be given at least once (env steps of experience)")
    budgets = sorted(budgets)  # --budget flags in any order; a repeated one is refused
    result = run(NAME, store, options, extra_agents=(agent,), algos=(), budgets=tuple(budgets))
    scores = read_scores(Path(store) / "scores.csv")
    mine = scores[scores["kind"] == "extra"]
    board = append_leaderboard(mine, out)
    top = mine[mine["selected"].astype(bool) & (mine["budget"] == max(budgets))]
    means = top.groupby(["family", "regime"])["normalised"].mean()
    lines = [f"- {f}, {r}: mean normalised regret {v:.3g}" for (f, r), v in means.items()]
    return "\n".join(
        [
            f"{agent}: {len(mine)} rows appended to {out} ({len(board)} rows in all; "
            f"report of the run: {getattr(result, 'path', store)})",
            f"at N={max(budgets):,} (0 the oracle, 1 the best constant):",
            *lines,
        ]
    )
