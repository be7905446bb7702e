"""What ``rl-vs-principled`` covers and how it scores: its protocol, shared by stages and report.

The suite's stages (:mod:`osfb_gym.bench.suites.rl_vs_principled`) and its
report (:mod:`osfb_gym.bench.suites.rl_vs_principled.analysis`) both read it;
it imports neither (protocol: docs/reproductions/rl-vs-principled.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from osfb_gym.core.validation import check_int

NAME = "rl-vs-principled"
VIEW_LABELS = {"plain": "O0", "features": "O1", "feedback": "O2"}
#: principled agents and their validation grids, per family
PRINCIPLED: dict[str, dict[str, dict[str, list[Any]]]] = {
    "lending": {"Greedy": {}, "Adaptive": {"rho": [0.0625, 0.25, 1.0]}},
    "apple": {
        "MarginPerceptron": {"m": [0.5, 2.0, 8.0]},
        "LabelEfficient": {"beta": [0.25, 1.0, 4.0]},
    },
    "reject": {"DSOL": {}, "DRAL": {}, "DSAL": {"gamma": [1.0, 2.0, 4.0]}},
    "services": {"AcQUIre": {}, "Uniform": {}, "MaxLossGreedy": {}},
}
#: RL's gammas: 0 where a decision's reward does not depend on later ones; reject's hidden
#: losses arrive at the episode's end, so its grid is with and without discount
GAMMAS = {"reject": [0.99, 1.0], "services": [0.99, 1.0]}
ENV_KWARGS = {"services": {"n_users": 40, "n_services": 5, "reference_restarts": 1}}


@dataclass(frozen=True)
class Protocol:
    """What a run covers; every field is a ``--set`` setting (lists comma-separated).

    RL gets the views ``fixed_views`` in the fixed world, ``resampled_views`` in the other.
    """

    #: the env families (lending, apple, reject, services); each adds about as much time
    families: tuple[str, ...] = ("lending", "reject")
    #: "fixed" (run s plays world s across its episodes) and/or "resampled" (a new world each)
    regimes: tuple[str, ...] = ("fixed", "resampled")
    #: what RL sees in the fixed regime (plain, features, feedback)
    fixed_views: tuple[str, ...] = ("plain",)
    #: what RL sees in the resampled regime (plain, features, feedback)
    resampled_views: tuple[str, ...] = ("plain", "features")
    #: the RL algorithms (PPO, A2C, DQN, RecurrentPPO)
    algos: tuple[str, ...] = ("PPO",)
    #: the checkpoints N: env steps of experience before every agent is scored
    budgets: tuple[int, ...] = (10_000, 30_000)
    #: test runs per cell (the --seeds flag)
    seeds: int = 5
    #: held-out episodes scored at each checkpoint of a run
    episodes: int = 20
    #: validation runs per configuration (the grids are chosen on them)
    validation_seeds: int = 1
    #: steps per episode (the --horizon flag)
    horizon: int = 200
    #: PPO's and A2C's rollout lengths on the RL grid
    n_steps: tuple[int, ...] = (512,)
    #: entropy coefficients on the RL grid
    ent_coef: tuple[float, ...] = (0.0,)
    #: PPO's minibatch size
    batch_size: int = 128

    def __post_init__(self) -> None:
        """Check the counts, and that every name is among its choices (the error names them)."""
        from osfb_gym.bench.rl import ALGORITHMS
        from osfb_gym.bench.suites.experience import REGIMES
        from osfb_gym.bench.suites.tables import subset
        from osfb_gym.core.family import FAMILIES

        views = dict.fromkeys(("fixed_views", "resampled_views"), tuple(VIEW_LABELS))
        choices = {"families": tuple(FAMILIES), "regimes": REGIMES, **views, "algos": ALGORITHMS}
        for key, valid in choices.items():
            subset(getattr(self, key), valid, f"--set {key}")
        for key in ("seeds", "episodes", "validation_seeds", "horizon", "batch_size"):
            check_int(getattr(self, key), key, minimum=1)
        if not self.budgets or not self.n_steps or not self.ent_coef:
            raise ValueError("budgets, n_steps and ent_coef must each name at least one value")


def scored(rows: pd.DataFrame) -> pd.DataFrame:
    """Return one row per (cell, checkpoint): the means over the scored episodes."""
    out = []
    for row in rows[rows["agent"] != "constant"].itertuples():  # the constants have no points
        params = json.loads(row.params)
        rl = "algo" in params
        agent = f"{params['algo']}+{VIEW_LABELS[params['view']]}" if rl else params["agent"]
        config = params.get("algo_kwargs", params.get("agent_params", {}))
        for point in row.points:
            out.append(
                {
                    "family": row.setting,
                    "regime": params["regime"],
                    "split": params["split"],
                    "agent": agent,
                    "kind": "rl" if rl else "principled",
                    "view": params.get("view", ""),
                    "config": json.dumps(config, sort_keys=True),
                    "seed": row.seed,
                    "budget": point["budget"],
                    **{k: float(np.mean(point[k])) for k in ("objective", "oracle", "regret")},
                    "train_regret": point["train_regret"],
                    "steps_per_episode": point["steps"],
                    **{k: v for k, v in point.items() if k.startswith("mean_")},
                }
            )
    return pd.DataFrame(out)


def choose(validation: pd.DataFrame) -> pd.DataFrame:
    """Return the best configuration per (family, regime, agent) on the validation regret."""
    keys = ["family", "regime", "agent"]
    last = validation[validation["budget"] == validation.groupby(keys)["budget"].transform("max")]
    means = last.groupby([*keys, "kind", "config"], as_index=False)["regret"].mean()
    return means.loc[means.groupby(keys)["regret"].idxmin()]
