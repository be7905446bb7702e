"""What ``rl-vs-principled`` covers and how it scores: its protocol, shared by stages and report.

The suite's stages (:mod:`osfb_gym.bench.suites.rl_vs_principled`) and its
report (:mod:`osfb_gym.bench.suites.rl_vs_principled.analysis`) both read it;
it imports neither (protocol: docs/reproductions/rl-vs-principled.md).
"""

from __future__ import annotations

import importlib
import json
import zlib
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from osfb_gym.bench.driver import COUNT_OR_ZERO, POSITIVE_OR_NONE
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
#: the principled agents of the dynamic regime's worlds, where the family's own do not run
DYNAMIC_PRINCIPLED: dict[str, dict[str, dict[str, list[Any]]]] = {
    "lending": {"MaxProfit": {}, "DemographicParity": {}, "EqualOpportunity": {}},
}
#: RL's gammas: 0 where a decision's reward does not depend on later ones; reject's hidden
#: losses arrive at the episode's end, so its grid is with and without discount
GAMMAS = {"reject": [0.99, 1.0], "services": [0.99, 1.0]}
ENV_KWARGS = {"services": {"n_users": 40, "n_services": 5, "reference_restarts": 1}}


#: the worlds with consequences of the "dynamic" regime (DESIGN.md section 9), per family
DYNAMIC_ENVS = {"lending": "DelayedImpactLending-v0", "services": "MultiServiceChoice-Retention-v0"}
#: the version of the protocol: rows of ``scores.csv`` and of a leaderboard carry it, and a
#: leaderboard refuses rows of another (bump it when a change moves the scores)
PROTOCOL_VERSION = 2
#: documented budget presets (``--set budgets=...``); the default is the first
BUDGET_PRESETS = {
    "default": (10_000, 30_000),
    "1e4": (10_000,),
    "1e5": (10_000, 100_000),
    "1e6": (10_000, 100_000, 1_000_000),
}
#: PPO's one-at-a-time sensitivity around the chosen defaults (``--set sensitivity=true`` or
#: ``only``)
SENSITIVITY = {
    "learning_rate": (1e-4, 3e-4, 1e-3),
    "n_steps": (128, 512, 2048),
    "ent_coef": (0.0, 0.01, 0.1),
}
#: the setting the sensitivity runs vary one key of at a time (the report names the key)
SENSITIVITY_BASE = {"learning_rate": 3e-4, "n_steps": 512, "ent_coef": 0.0}


def _sensitivity(text: str) -> bool | Literal["only"]:
    """Read ``--set sensitivity=``: true, false, or only (the sensitivity runs alone)."""
    word = text.strip().lower()
    if word not in ("true", "false", "only"):
        raise ValueError(text)
    return "only" if word == "only" else word == "true"


#: ``--set sensitivity=`` reads true, false or only
SENSITIVITY_SETTING = {"read": _sensitivity, "expects": "expects true, false or only"}
#: ``--set recurrent_budget=`` reads a number of env steps, 0 for none
CAP = {**COUNT_OR_ZERO, "expects": "must be a whole number of env steps, or 0 for no cap"}


def _recurrent(algo: str) -> bool:
    """Whether ``algo`` has a recurrent policy (RecurrentPPO): the feedback view, capped."""
    from osfb_gym.bench.rl import algorithm_info

    return algorithm_info(algo).recurrent


@dataclass(frozen=True)
class Protocol:
    """What a run covers; every field is a ``--set`` setting (lists comma-separated).

    RL gets the views ``fixed_views`` in the fixed and dynamic worlds, ``resampled_views``
    in the resampled one.

    Budgets: ``budgets`` are the checkpoints N; presets (``BUDGET_PRESETS``) are
    ``--set budgets=10000`` (1e4), ``10000,100000`` (1e5) and ``10000,100000,1000000``
    (1e6). The default ``10000,30000`` is today's default run.

    Tuning rule (the same tuning budget for both sides): every agent (each RL
    algorithm x view, each principled agent) evaluates at most ``tuning``
    configurations, each on the same ``validation_seeds`` validation runs (worlds
    and episode seeds the test never uses), trained or warmed up to the largest
    budget and scored at every budget. A grid with more than ``tuning``
    configurations is subsampled without replacement by a Generator seeded with the
    (family, agent) name (:func:`subsample`); RL's grid is gamma x ``learning_rate``
    x ``n_steps`` x ``ent_coef``, a principled agent's its ``PRINCIPLED`` grid. At
    each budget N the configuration with the lowest mean validation regret at N is
    the one tested at N (ties: the first by its JSON text); a configuration chosen at
    several budgets is trained once and scored at each, to the largest budget it was
    chosen at, or to the algorithm's largest where its schedule spans the whole run
    (DQN's exploration, :attr:`agents.rl.AlgorithmInfo.planned`), as on validation.

    DQN and QR-DQN run on Discrete action spaces only: on lending, reject and delayed
    impact their cells train on the ``-Discrete`` twin's actions (``discrete_actions``),
    and :func:`osfb_gym.bench.rl.train` refuses them on an RL id whose actions are not
    Discrete, naming the twin.
    """

    #: the env families (lending, apple, reject, services); each adds about as much time
    families: tuple[str, ...] = ("lending", "reject")
    #: "fixed" (run s plays world s across its episodes), "resampled" (a new world each
    #: episode), "dynamic" (fixed worlds with consequences: lending's delayed impact,
    #: services' retention; other families have none and skip it)
    regimes: tuple[str, ...] = ("fixed", "resampled")
    #: what RL sees in the fixed and dynamic regimes (plain, features, feedback)
    fixed_views: tuple[str, ...] = ("plain",)
    #: what RL sees in the resampled regime (plain, features, feedback)
    resampled_views: tuple[str, ...] = ("plain", "features")
    #: the RL algorithms (PPO, A2C, DQN, RecurrentPPO, TRPO, QRDQN; RecurrentPPO on the
    #: feedback view only); empty: the principled side only (a leaderboard entry)
    algos: tuple[str, ...] = ("PPO",)
    #: the checkpoints N: env steps of experience before every agent is scored
    budgets: tuple[int, ...] = BUDGET_PRESETS["default"]
    #: RecurrentPPO is trained and scored at the budgets up to this one only (0: all):
    #: its LSTM policy took about 4 ms a step with 16 envs on one core at width 64, over
    #: an hour a 1e6-step run, against 0.05-0.25 ms for PPO, A2C and DQN
    recurrent_budget: int = field(default=100_000, metadata=CAP)
    #: RecurrentPPO's LSTM width: 64, the width of every algorithm's MLP layers (SB3's
    #: [64, 64]); sb3-contrib's default 256 costs 3.6 times as much a step (14 ms against 4)
    lstm_hidden_size: int = 64
    #: test runs per verdict cell (the --seeds flag)
    seeds: int = 10
    #: held-out episodes scored at each checkpoint of a run
    episodes: int = 20
    #: validation runs per configuration, the same for both sides
    validation_seeds: int = 2
    #: configurations each agent may evaluate on validation, the same for both sides
    tuning: int = 3
    #: steps per episode (the --horizon flag)
    horizon: int = 200
    #: learning rates on the RL grid (empty: each algorithm's default)
    learning_rate: tuple[float, ...] = field(default=(), metadata=POSITIVE_OR_NONE)
    #: PPO's and A2C's rollout lengths on the RL grid
    n_steps: tuple[int, ...] = (256, 512)
    #: entropy coefficients on the RL grid
    ent_coef: tuple[float, ...] = (0.0,)
    #: PPO's minibatch size
    batch_size: int = 128
    #: env copies each RL run steps at once (the family's native vector env where it has
    #: one, else SB3's DummyVecEnv); each of PPO's and A2C's rollouts is then
    #: n_steps x n_envs steps (1 keeps the released rows' training)
    n_envs: int = 1
    #: run PPO's one-at-a-time sensitivity over SENSITIVITY on validation (a table); only:
    #: those runs and the constant actions alone, without choosing or testing anything
    sensitivity: bool | Literal["only"] = field(default=False, metadata=SENSITIVITY_SETTING)
    #: your own agents, ``module:Class`` (an :class:`agents.base.Agent` subclass with a
    #: no-argument constructor), run as principled agents are (no grid)
    extra_agents: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """Check the counts, and that every name is among its choices (the error names them)."""
        from osfb_gym.bench.rl import ALGORITHMS
        from osfb_gym.bench.suites.experience import REGIMES
        from osfb_gym.bench.suites.tables import subset
        from osfb_gym.core.family import FAMILIES

        views = dict.fromkeys(("fixed_views", "resampled_views"), tuple(VIEW_LABELS))
        choices = {"families": tuple(FAMILIES), "regimes": REGIMES, **views, "algos": ALGORITHMS}
        for key, valid in choices.items():
            if key != "algos" or self.algos:
                subset(getattr(self, key), valid, f"--set {key}")
        for key in (
            "seeds",
            "episodes",
            "validation_seeds",
            "horizon",
            "batch_size",
            "tuning",
            "n_envs",
            "lstm_hidden_size",
        ):
            check_int(getattr(self, key), key, minimum=1)
        for key in ("budgets", "n_steps", "ent_coef"):
            if not getattr(self, key):
                raise ValueError(f"{key} must name at least one value")
        if any(int(b) < 1 for b in self.budgets):
            raise ValueError(f"budgets must be positive env step counts, got {self.budgets}")
        if list(self.budgets) != sorted(set(self.budgets)):
            raise ValueError(
                "budgets must be increasing, each once (the checkpoints N, e.g. 10000,30000), "
                f"got {','.join(map(str, self.budgets))}"
            )
        if min(self.ent_coef) < 0:
            raise ValueError(f"ent_coef must be >= 0 (an entropy bonus), got {self.ent_coef}")
        self._check_minibatches()
        repeated = {spec for spec in self.extra_agents if self.extra_agents.count(spec) > 1}
        if repeated:
            raise ValueError(f"extra_agents lists {sorted(repeated)[0]} more than once")
        check_int(self.recurrent_budget, "recurrent_budget", minimum=0)
        others = [a for a in self.algos if a != "PPO"] + list(self.extra_agents)
        if self.sensitivity == "only" and others:
            raise ValueError(
                f"sensitivity=only runs PPO's sensitivity runs alone: {others[0]} (of "
                f"{'algos' if others[0] in self.algos else 'extra_agents'}) would not run; "
                "drop it, or use sensitivity=true for the whole protocol with the table"
            )
        if not self.cells():
            raise ValueError(
                f"--set families={','.join(self.families)} with regimes="
                f"{','.join(self.regimes)} leaves no cell to run: the dynamic regime has "
                f"worlds for {', '.join(DYNAMIC_ENVS)} only"
            )
        for spec in self.extra_agents:
            if spec.count(":") != 1:
                raise ValueError(f"extra_agents must read module:Class, got {spec!r}")
            self._check_plays(spec)
        regimes = {regime for _, regime in self.cells()}
        for algo in self.algos:
            if _recurrent(algo) and not any(self.views_of(algo, r) for r in regimes):
                names = {"resampled_views" if r == "resampled" else "fixed_views" for r in regimes}
                raise ValueError(
                    f"algos has {algo}, which runs on the feedback view only, and no regime "
                    f"of the run ({', '.join(sorted(regimes))}) has it: add feedback to "
                    f"{' or '.join(sorted(names))}"
                )

    def _check_minibatches(self) -> None:
        """Refuse rollouts or minibatches of one step for the algorithms that take minibatches.

        A rollout (``n_steps x n_envs``) or minibatch of one cannot normalise its
        advantages: PPO and TRPO assert it inside the run, RecurrentPPO's loss turns NaN.
        """
        from osfb_gym.bench.rl import algorithm_info

        minibatched = [a for a in self.algos if "batch_size" in algorithm_info(a).tunes]
        if not minibatched:
            return
        if min(self.n_steps) * self.n_envs < 2:
            raise ValueError(
                f"{minibatched[0]} needs rollouts of at least 2 steps (n_steps x n_envs), got "
                f"n_steps={min(self.n_steps)} x n_envs={self.n_envs}"
            )
        if self.batch_size < 2:
            raise ValueError(
                f"batch_size must be at least 2 for {minibatched[0]} (a minibatch of one "
                f"cannot normalise its advantages), got {self.batch_size}"
            )

    def _check_plays(self, spec: str) -> None:
        """Refuse a user's agent that plays none of the run's worlds (it would add no row)."""
        ids = list(dict.fromkeys(env_id_of(*cell) for cell in self.cells()))
        if ids and not any(plays(spec, env_id) for env_id in ids):
            raise ValueError(
                f"extra_agents: {spec} plays none of this run's worlds ({', '.join(ids)}); its "
                "class's env_ids name the ids it plays: add their families with --set families="
            )

    def budgets_of(self, algo: str) -> tuple[int, ...]:
        """Return the sorted budgets ``algo`` is trained to and scored at (RecurrentPPO's cap)."""
        budgets = tuple(sorted(self.budgets))
        if not _recurrent(algo) or not self.recurrent_budget:
            return budgets
        return tuple(b for b in budgets if b <= self.recurrent_budget)

    def views_of(self, algo: str, regime: str) -> tuple[str, ...]:
        """Return the views ``algo`` gets in ``regime`` (RecurrentPPO: the feedback view only)."""
        views = tuple(self.resampled_views if regime == "resampled" else self.fixed_views)
        if _recurrent(algo):
            return ("feedback",) if "feedback" in views else ()
        return views

    def cells(self) -> list[tuple[str, str]]:
        """Return the (family, regime) cells: "dynamic" only where a family has such a world."""
        return [
            (family, regime)
            for family in self.families
            for regime in self.regimes
            if regime != "dynamic" or family in DYNAMIC_ENVS
        ]


def env_id_of(family: str, regime: str) -> str:
    """Return the env id a (family, regime) cell plays: the family's, or its dynamic world."""
    from osfb_gym.core.family import FAMILIES

    return DYNAMIC_ENVS[family] if regime == "dynamic" else FAMILIES[family].env_id


def plays(spec: str, env_id: str) -> bool:
    """Return whether the user's agent ``module:Class`` runs on ``env_id`` (its ``env_ids``).

    An agent declaring no ``env_ids`` is taken to run everywhere.
    """
    module, _, name = spec.partition(":")
    try:
        cls = getattr(importlib.import_module(module), name, None)
    except ImportError as error:
        raise ValueError(f"extra_agents: cannot import {module!r} ({error})") from None
    if not isinstance(cls, type):
        raise ValueError(f"extra_agents: module {module!r} has no class {name!r}")
    return env_id in (getattr(cls, "env_ids", ()) or (env_id,))


def principled_agents(family: str, regime: str) -> dict[str, dict[str, list[Any]]]:
    """Return the principled agents of a (family, regime) cell and their validation grids."""
    if regime == "dynamic":
        return DYNAMIC_PRINCIPLED.get(family, PRINCIPLED[family])
    return PRINCIPLED[family]


def subsample(grid: list[dict[str, Any]], size: int, name: str) -> list[dict[str, Any]]:
    """Return at most ``size`` configurations of ``grid``, drawn by a Generator seeded by ``name``.

    The draw is without replacement and keeps grid order; a grid of at most ``size``
    configurations is returned whole.
    """
    if len(grid) <= size:
        return list(grid)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    keep = np.sort(rng.choice(len(grid), size=size, replace=False))
    return [grid[int(i)] for i in keep]


def scored(rows: pd.DataFrame) -> pd.DataFrame:
    """Return one row per (cell, checkpoint): the means over the scored episodes."""
    out = []
    for row in rows[rows["agent"] != "constant"].itertuples():  # the constants have no points
        params = json.loads(row.params)
        rl = "algo" in params
        agent = f"{params['algo']}+{VIEW_LABELS[params['view']]}" if rl else params["agent"]
        config = params.get("algo_kwargs", params.get("agent_params", {}))
        at = [int(b) for b in params.get("chosen_at", params["budgets"])]
        chosen = {*at, 0} if min(at) == min(int(b) for b in params["budgets"]) else set(at)
        purpose = params.get("purpose", "tune")
        for point in row.points:
            out.append(
                {
                    "family": str(row.setting).removesuffix("-dynamic"),
                    "regime": params["regime"],
                    "env_id": row.env_id,
                    "split": params["split"],
                    "purpose": purpose,
                    "agent": agent,
                    "kind": "rl" if rl else "extra" if ":" in agent else "principled",
                    "view": params.get("view", ""),
                    "config": json.dumps(config, sort_keys=True),
                    "seed": row.seed,
                    "budget": point["budget"],
                    # a sensitivity run is never chosen (:func:`choose`)
                    "selected": int(point["budget"]) in chosen and purpose == "tune",
                    **{k: float(np.mean(point[k])) for k in ("objective", "oracle", "regret")},
                    "train_regret": point["train_regret"],
                    "steps_per_episode": point["steps"],
                    **{k: v for k, v in point.items() if k.startswith("mean_")},
                }
            )
    return pd.DataFrame(out)


def choose(validation: pd.DataFrame) -> pd.DataFrame:
    """Return the tested configuration per (family, regime, agent, budget): the tuning rule.

    At each budget N (> 0) the configuration with the lowest mean validation regret at
    N over the validation runs (:class:`Protocol`); the sensitivity runs never choose.
    """
    keys = ["family", "regime", "agent", "budget"]
    tuning = validation[(validation["budget"] > 0) & (validation["purpose"] == "tune")]
    means = tuning.groupby([*keys, "kind", "config"], as_index=False)["regret"].mean()
    return means.loc[means.groupby(keys)["regret"].idxmin()].reset_index(drop=True)
