"""What ``n_envs`` does to rl-vs-principled's PPO cells: training speed and the learning result.

Each run is one test-split cell of the suite (``experience.rl_cell``: PPO trained
on a fixed world with the regret of its training episodes recorded, scored on 20
held-out episodes at every budget), with the suite's default configuration
(the family's first gamma: 0 for lending and apple, 0.99 for reject and the
services; ``n_steps`` 256 per env, minibatch 128, ``ent_coef`` 0; the native
vector env through ``osfb_gym.bench.rl.train``'s default ``vec="auto"``), for
``n_envs`` in ``--n-envs`` and runs ``0..--seeds-1``; the same worlds and
held-out episodes for every ``n_envs``, so the comparison is paired.

Printed per family and ``n_envs``: training CPU seconds (the cell's CPU time
minus its scoring, ``time.process_time``), env steps per training CPU second,
mean test regret and training regret paid at each budget, and the paired
verdicts against ``n_envs=1``
from :func:`osfb_gym.stats.paired` (Holm over the printed comparisons). Runs
interleave the ``n_envs`` values (run-major), so load drift hits all alike.

Run: ``python benchmarks/rl_n_envs.py [--families lending,apple] [--n-envs 1,8,16]
[--seeds 10] [--budgets 10000,30000] [--scale-n-steps 1] [--csv F]``
(``--csv``: the rows, written after every run; an existing file's runs are kept
and skipped, so a stopped run resumes)
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one BLAS thread, set before NumPy loads it

import dataclasses  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _args import parse_args  # noqa: E402

import osfb_gym  # noqa: E402, F401  (registers the ids)
from osfb_gym.bench.suites import experience  # noqa: E402
from osfb_gym.bench.suites.rl_vs_principled.protocol import GAMMAS  # noqa: E402
from osfb_gym.bench.sweep import Cell  # noqa: E402
from osfb_gym.core.family import FAMILIES  # noqa: E402
from osfb_gym.stats import Page, paired  # noqa: E402

#: the suite's PPO configuration: its grid's first values (protocol.Protocol's defaults;
#: gamma: the family's first, ``GAMMAS``)
PPO_CONFIG = {"n_steps": 256, "ent_coef": 0.0, "batch_size": 128}


@dataclasses.dataclass
class Args:
    """The benchmark's arguments (``--families`` etc.)."""

    families: str = "lending,apple"
    n_envs: str = "1,8,16"
    seeds: int = 10
    budgets: str = "10000,30000"
    regime: str = "fixed"
    horizon: int = 200
    #: 1: ``n_steps`` 256 / ``n_envs`` per env, so every ``n_envs`` has rollouts of 256 steps
    scale_n_steps: int = 0
    csv: str | None = None


def cell(family: str, n_envs: int, seed: int, args: Args) -> Cell:
    """Return the suite's test cell of PPO on ``family`` for run ``seed``."""
    params = {
        "regime": args.regime,
        "split": "test",
        "budgets": [int(b) for b in args.budgets.split(",")],
        "episodes": 20,
        "algo": "PPO",
        "view": "plain",
        "algo_kwargs": PPO_CONFIG
        | {"gamma": GAMMAS.get(family, [0.0])[0]}
        | ({"n_steps": max(PPO_CONFIG["n_steps"] // n_envs, 1)} if args.scale_n_steps else {}),
        "normalize_reward": False,
        "deterministic": True,
        "n_envs": n_envs,
    }
    env_id = FAMILIES[family].env_id
    return Cell(family, env_id, {"horizon": args.horizon}, "PPO+O0", params, seed)


def run(family: str, n_envs: int, seed: int, args: Args) -> list[dict[str, Any]]:
    """Run one cell; return a row per budget with its CPU times."""
    scoring = [0.0]
    evaluate = experience.evaluate

    def timed_evaluate(*a: Any, **k: Any) -> Any:
        started = time.process_time()
        result = evaluate(*a, **k)
        scoring[0] += time.process_time() - started
        return result

    experience.evaluate = timed_evaluate  # type: ignore[assignment]
    try:
        started = time.process_time()
        out = experience.rl_cell(cell(family, n_envs, seed, args))
        total = time.process_time() - started
    finally:
        experience.evaluate = evaluate  # type: ignore[assignment]
    budgets = [int(b) for b in args.budgets.split(",")]
    train_seconds = total - scoring[0]
    return [
        {
            "family": family,
            "n_envs": n_envs,
            "seed": seed,
            "budget": point["budget"],
            "regret": float(np.mean(point["regret"])),
            "train_regret": point["train_regret"],
            "train_cpu_s": train_seconds,
            "steps_per_cpu_s": max(budgets) / train_seconds,
        }
        for point in out["points"]
        if point["budget"] > 0
    ]


def main(argv: list[str] | None = None) -> None:
    """Run every (family, run, n_envs) cell, run-major; print speed, regret and verdicts."""
    import torch

    args = parse_args(Args, __doc__.splitlines()[0], argv)
    torch.set_num_threads(1)
    families, counts = args.families.split(","), [int(n) for n in args.n_envs.split(",")]
    print(f"load average before: {' '.join(f'{v:.1f}' for v in os.getloadavg())}", flush=True)
    rows: list[dict[str, Any]] = []
    if args.csv and os.path.exists(args.csv):  # resume: keep the runs already written
        rows = pd.read_csv(args.csv).to_dict("records")
    done = {(row["family"], row["n_envs"], row["seed"]) for row in rows}
    for seed in range(args.seeds):
        for family in families:
            for n in counts:
                if (family, n, seed) in done:
                    continue
                rows += run(family, n, seed, args)
                last = rows[-1]
                print(
                    f"run {seed} {family} n_envs={n}: {last['train_cpu_s']:.1f} CPU s training, "
                    f"regret at {last['budget']}: {last['regret']:.4f}",
                    flush=True,
                )
                if args.csv:
                    pd.DataFrame(rows).to_csv(args.csv, index=False)
    print(f"load average after: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    report(pd.DataFrame(rows), counts)


def report(frame: pd.DataFrame, counts: list[int]) -> None:
    """Print speed, test regret and training regret, and paired verdicts against ``counts[0]``.

    The training regret is what the suite records as the regret paid for
    experience: the summed regret of the training episodes finished by each budget.
    """
    speed = frame.groupby(["family", "n_envs"])[["train_cpu_s", "steps_per_cpu_s"]].median()
    print("\nmedian training CPU s and env steps per training CPU s (whole cell, largest budget)")
    print(speed.round(1).to_string())
    page, labels = Page(), []
    for metric, what in (("regret", "test regret"), ("train_regret", "training regret paid")):
        table = frame.pivot_table(index=["family", "n_envs"], columns="budget", values=metric)
        print(f"\nmean {what} (lower is better) over runs, per budget")
        print(table.round(4).to_string())
        for (family, budget), part in frame.groupby(["family", "budget"]):
            base = part[part.n_envs == counts[0]].sort_values("seed")[metric].to_numpy()
            for n in counts[1:]:
                other = part[part.n_envs == n].sort_values("seed")[metric].to_numpy()
                names = (f"n_envs={n}", f"n_envs={counts[0]}")
                page.add(paired(other, base, names=names, lower_is_better=True))
                labels.append(f"{family} {what} at {budget}")
    print(f"\npaired verdicts against n_envs={counts[0]} (Holm over {len(labels)})")
    for label, verdict in zip(labels, page.verdicts, strict=True):
        print(f"{label:40s} {verdict.text}")


if __name__ == "__main__":
    main()
