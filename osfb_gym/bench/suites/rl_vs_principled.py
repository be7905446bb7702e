"""Does generic RL beat the principled agents? Equal experience, fair views, tuned, many seeds.

``osfb-bench run rl-vs-principled`` (alias ``rl-vs-bandit``) runs on the engine
(custom cells of :mod:`osfb_gym.bench.experience`, stored, resumable, local or Ray):

1. *validation*: every RL configuration (a small grid: gamma x n_steps) and
   every principled agent's grid, on validation worlds and episode seeds
   kept apart from the test ones; the best of each on the validation
   objective is chosen per (family, regime, view);
2. *test*: the chosen ones, ``seeds`` runs each (a fixed world: run s plays
   world s with training seed s), scored on ``episodes`` held-out episodes
   after N env steps of experience, N in ``budgets`` (principled agents
   too: in a fixed world they keep their state across the N steps), and
   every constant action (the best constant policy).

:func:`report` turns the rows into ``docs/results/rl-vs-principled.md``:
normalised regret ``(metric - oracle) / (best constant - oracle)`` (0: the
oracle, 1: the best constant policy) with IQM / mean and stratified
bootstrap CIs (:mod:`osfb_gym.bench.stats`), learning curves against
experience, total regret over N + T, probability of improvement and
performance profiles.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from osfb_gym.bench.run import run_cells
from osfb_gym.bench.sweep import AgentSpec, EnvSpec, SweepSpec
from osfb_gym.core.family import FAMILIES

NAME = "rl-vs-principled"
CELLS = "osfb_gym.bench.experience:"
VIEW_LABELS = {"plain": "O0", "features": "O1", "feedback": "O2"}
#: principled agents and their validation grids, per family
PRINCIPLED: dict[str, dict[str, dict[str, list[Any]]]] = {
    "lending": {"Greedy": {}, "Adaptive": {"rho": [0.0625, 0.25, 1.0]}},
    "apple": {"MarginPerceptron": {"m": [0.5, 2.0, 8.0]},
              "LabelEfficient": {"beta": [0.25, 1.0, 4.0]}},
    "reject": {"DSOL": {}, "DRAL": {}, "DSAL": {"gamma": [1.0, 2.0, 4.0]}},
    "services": {"AcQUIre": {}, "Uniform": {}, "MaxLossGreedy": {}},
}  # fmt: skip
#: the RL grid: gamma 0 where a decision's reward does not depend on later ones; reject's
#: hidden losses arrive at the episode's end, so its grid is with and without discount
GAMMAS = {"reject": [0.99, 1.0], "services": [0.99, 1.0]}
ENV_KWARGS = {"services": {"n_users": 40, "n_services": 5, "reference_restarts": 1}}


@dataclass(frozen=True)
class Protocol:
    """What a run covers; every field is a ``--set`` setting (lists comma-separated)."""

    #: the default fits about an hour of a shared 2-core machine; apple and services
    #: (``--set families=lending,apple,reject,services``) cost as much again each
    families: tuple[str, ...] = ("lending", "reject")
    regimes: tuple[str, ...] = ("fixed", "resampled")
    #: views in the fixed world / in the resampled world
    fixed_views: tuple[str, ...] = ("plain",)
    resampled_views: tuple[str, ...] = ("plain", "features")
    algos: tuple[str, ...] = ("PPO",)
    budgets: tuple[int, ...] = (10_000, 30_000)
    seeds: int = 5
    episodes: int = 20
    validation_seeds: int = 1
    horizon: int = 200
    n_steps: tuple[int, ...] = (512,)
    ent_coef: tuple[float, ...] = (0.0,)
    batch_size: int = 128
    algo_kwargs: dict[str, Any] = field(default_factory=dict)

    def views(self, regime: str) -> tuple[str, ...]:
        """Return the observation views RL gets in ``regime``."""
        return self.fixed_views if regime == "fixed" else self.resampled_views


def _env(family: str, protocol: Protocol) -> EnvSpec:
    kwargs = ENV_KWARGS.get(family, {"horizon": protocol.horizon})
    return EnvSpec(FAMILIES[family].env_id, family, dict(kwargs))


def _common(protocol: Protocol, regime: str, split: str, budgets: tuple[int, ...]) -> dict:
    episodes = protocol.episodes
    return {"regime": regime, "split": split, "budgets": list(budgets), "episodes": episodes}


def rl_configs(protocol: Protocol, family: str, algo: str = "PPO") -> list[dict[str, Any]]:
    """Return the RL hyperparameter grid of ``family`` for ``algo``.

    PPO and RecurrentPPO: gamma x n_steps x ent_coef (batch ``batch_size``);
    A2C: gamma x n_steps x ent_coef; DQN: gamma (its other settings SB3's).
    """
    configs = []
    for g in GAMMAS.get(family, [0.0, 0.99]):
        if algo == "DQN":
            configs.append({"gamma": g, **protocol.algo_kwargs})
            continue
        for n in protocol.n_steps:
            for e in protocol.ent_coef:
                config = {"gamma": g, "n_steps": n, "ent_coef": e}
                if algo != "A2C":
                    config["batch_size"] = protocol.batch_size
                configs.append({**config, **protocol.algo_kwargs})
    return configs


def _rl_params(protocol: Protocol, family: str, regime: str, view: str, algo: str) -> dict:
    services = family == "services"  # normalised rewards and stochastic evaluation
    return {"algo": algo, "view": view, "normalize_reward": services,
            "deterministic": not services}  # fmt: skip


def validation_specs(protocol: Protocol) -> list[SweepSpec]:
    """Stage 1: every RL configuration and principled grid value on the validation split."""
    agents = []
    for family in protocol.families:
        for regime in protocol.regimes:
            common = _common(protocol, regime, "validation", protocol.budgets[:1])
            for view in protocol.views(regime):
                for algo in protocol.algos:
                    for config in rl_configs(protocol, family, algo):
                        params = {**common, **_rl_params(protocol, family, regime, view, algo),
                                  "algo_kwargs": config}  # fmt: skip
                        agents.append(AgentSpec(algo, params, envs=(family,),
                                                runner=CELLS + "rl_cell"))  # fmt: skip
            for name, grid in PRINCIPLED[family].items():
                common = _common(protocol, regime, "validation", protocol.budgets[-1:])
                for values in _grid(grid):
                    params = {**common, "agent": name, "agent_params": values}
                    agents.append(AgentSpec(name, params, envs=(family,),
                                            runner=CELLS + "principled_cell"))  # fmt: skip
    envs = tuple(_env(family, protocol) for family in protocol.families)
    return [SweepSpec(NAME, envs, tuple(agents), tuple(range(protocol.validation_seeds)))]


def _grid(grid: dict[str, list[Any]]) -> list[dict[str, Any]]:
    import itertools

    return [dict(zip(grid, values, strict=True)) for values in itertools.product(*grid.values())]


def scored(rows: pd.DataFrame) -> pd.DataFrame:
    """Return one row per (cell, checkpoint): the means over the scored episodes."""
    out = []
    for row in rows.itertuples():
        params = json.loads(row.params) if isinstance(row.params, str) else row.params
        if "points" not in row._fields or not isinstance(row.points, list):
            continue
        label = (f"{params['algo']}+{VIEW_LABELS[params['view']]}" if "algo" in params
                 else params["agent"])  # fmt: skip
        for point in row.points:
            out.append({
                "family": row.setting, "regime": params["regime"], "split": params["split"],
                "agent": label, "kind": "rl" if "algo" in params else "principled",
                "view": params.get("view", ""), "config": json.dumps(
                    params.get("algo_kwargs", params.get("agent_params", {})), sort_keys=True),
                "seed": row.seed, "budget": point["budget"],
                "objective": float(np.mean(point["objective"])),
                "oracle": float(np.mean(point["oracle"])),
                "regret": float(np.mean(point["regret"])), "train_regret": point["train_regret"],
                "steps_per_episode": point["steps"],
                **{k: v for k, v in point.items() if k.startswith("mean_")},
            })  # fmt: skip
    return pd.DataFrame(out)


def choose(validation: pd.DataFrame) -> pd.DataFrame:
    """Return the best configuration per (family, regime, agent) on the validation regret."""
    last = validation[validation["budget"] == validation.groupby(
        ["family", "regime", "agent"])["budget"].transform("max")]  # fmt: skip
    means = last.groupby(["family", "regime", "agent", "kind", "config"], as_index=False)[
        "regret"].mean()  # fmt: skip
    return means.loc[means.groupby(["family", "regime", "agent"])["regret"].idxmin()]


def test_specs(protocol: Protocol, chosen: pd.DataFrame) -> list[SweepSpec]:
    """Stage 2: the chosen configurations on the test split, and the constant policies."""
    agents = []
    for pick in chosen.itertuples():
        common = _common(protocol, pick.regime, "test", protocol.budgets)
        config = json.loads(pick.config)
        if pick.kind == "rl":
            algo, view_label = pick.agent.split("+")
            view = {v: k for k, v in VIEW_LABELS.items()}[view_label]
            params = {**common, **_rl_params(protocol, pick.family, pick.regime, view, algo),
                      "algo_kwargs": config}  # fmt: skip
            agents.append(AgentSpec(algo, params, envs=(pick.family,), runner=CELLS + "rl_cell"))
        else:
            params = {**common, "agent": pick.agent, "agent_params": config}
            agents.append(AgentSpec(pick.agent, params, envs=(pick.family,),
                                    runner=CELLS + "principled_cell"))  # fmt: skip
    for family in protocol.families:
        for regime in protocol.regimes:
            params = _common(protocol, regime, "test", protocol.budgets[:1])
            agents.append(AgentSpec("constant", params, envs=(family,),
                                    runner=CELLS + "constant_cell"))  # fmt: skip
    envs = tuple(_env(family, protocol) for family in protocol.families)
    return [SweepSpec(NAME, envs, tuple(agents), tuple(range(protocol.seeds)))]


def run(out_dir: str | Path, protocol: Protocol = Protocol(), *, docs: str | Path | None = None,
        **engine: Any) -> str:  # fmt: skip
    """Run both stages through the engine into ``out_dir``; write the report; return its text.

    ``engine`` goes to :func:`osfb_gym.bench.run.run_cells` (``resume``,
    ``executor``, ``workers``, ``address``, ``progress``). Cells run one per
    task (each is a training run). ``docs`` also writes the report there.
    """
    from osfb_gym.bench.suites.rl_vs_principled_report import report

    out = Path(out_dir)
    engine.setdefault("chunk_size", 1)
    validation = pd.concat([run_cells(spec, out, **engine)[0]
                            for spec in validation_specs(protocol)])  # fmt: skip
    chosen = choose(scored(validation))
    test = pd.concat([run_cells(spec, out, **engine)[0] for spec in test_specs(protocol, chosen)])
    return report(test, validation, protocol, out, docs=docs)


def from_settings(settings: dict[str, str], seeds: int | None, horizon: int | None) -> Protocol:
    """Build the protocol from ``--set`` settings (text), ``--seeds`` and ``--horizon``."""
    protocol, changes = Protocol(), dict[str, Any]()
    for key, text in settings.items():
        if key not in Protocol.__dataclass_fields__ or key == "algo_kwargs":
            raise ValueError(f"--set {key}: not a setting of {NAME}")
        default = getattr(protocol, key)
        try:
            if isinstance(default, tuple):
                kind = type(default[0])
                changes[key] = tuple(kind(float(v)) if kind is int else kind(v)
                                     for v in text.split(",") if v.strip())  # fmt: skip
            else:
                changes[key] = type(default)(float(text)) if isinstance(default, int) else text
        except ValueError:
            raise ValueError(f"--set {key}= could not read {text!r}") from None
    from osfb_gym.bench.experience import REGIMES
    from osfb_gym.bench.rl import ALGORITHMS

    for key, valid in (("families", tuple(FAMILIES)), ("regimes", REGIMES),
                       ("fixed_views", tuple(VIEW_LABELS)), ("resampled_views", tuple(VIEW_LABELS)),
                       ("algos", ALGORITHMS)):  # fmt: skip
        unknown = sorted(set(changes.get(key, ())) - set(valid))
        if unknown:
            raise ValueError(f"--set {key}: unknown {unknown}; choose from {list(valid)}")
    if any(b < 1 for b in changes.get("budgets", (1,))):
        raise ValueError(f"--set budgets: positive step counts only, got {changes['budgets']}")
    if seeds is not None:
        changes["seeds"] = seeds
    if horizon is not None:
        changes["horizon"] = horizon
    return replace(protocol, **changes)
