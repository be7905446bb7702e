"""Theorem 1 of Bose et al. against EXACT optima, on populations small enough to enumerate.

Theorem 1 bounds AcQUIre's expected total loss by a factor times
``L(Theta*)``, the loss of the best ``k`` services placed *anywhere* in the
parameter space (Definition 2.1: the minimiser of objective (1) over all
sets of ``k`` services), not only at users' preferences. The page's ratios
use a Lloyd-style reference, an upper bound on ``L(Theta*)``, so they are
lower bounds on the true ratios and cannot confirm an upper bound. Here:

- :func:`exact_optimum`: ``L(Theta*)`` exactly. Any set of services induces
  a partition of the users (each takes its best), and the best single
  service of a part is the minimiser of the part's total loss, in closed
  form for the squared, Mahalanobis and cosine families
  (:meth:`Population.refit`). So ``L(Theta*)`` is the minimum over the
  partitions of the users into at most ``k`` parts of the sum of the parts'
  minimal losses: a dynamic programme over the ``2^n`` subsets (n <= 14).
- :func:`preference_optimum`: the best ``k`` services at users' own
  preferences (a ``k``-medoids optimum), ``>= L(Theta*)``; shown beside it.
- :func:`acquire_expectation`: AcQUIre's expected loss, exactly, by summing
  over every sequence of picks with Algorithm 1's probabilities.
- :func:`measure`: the project's :class:`~agents.services.acquire.AcQUIre`
  agent run over many episode seeds on each fixed world, its mean ratio to
  ``L(Theta*)`` with a 95% CI, beside the exact expectation and the bound.

The bound's constant (eq. 2) is lost from our copy of the paper; its proof
(Lemma 3) replaces the factor 8 of Arthur and Vassilvitskii (2007, k-means++)
by it, so for the unweighted squared loss, where AcQUIre *is* k-means++
seeding, the bound is ``8 (ln k + 2)``. For the other families the constant
depends on the instance; we show ``ln k + 2`` (the bound without its constant).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import pandas as pd

EXACT_FAMILIES = ("squared", "mahalanobis", "cosine")  # refit is exact for these
MAX_USERS = 14  # 3^14 ~ 4.8e6 submask steps per k


def _check(population: object, k: int) -> None:
    family = getattr(population, "family", None)
    if family not in EXACT_FAMILIES:
        raise ValueError(
            f"population: exact optima need a family in {EXACT_FAMILIES} "
            f"(closed-form best service), got {family!r}"
        )
    if getattr(population, "offsets", None) is not None:
        raise ValueError("population: linear-predictor populations (offsets) are not supported")
    n = int(population.n)  # type: ignore[attr-defined]
    if not 2 <= n <= MAX_USERS:
        raise ValueError(f"population: needs 2 to {MAX_USERS} users, got {n}")
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 1 <= k <= n:
        raise ValueError(f"k must be an int in [1, {n}], got {k!r}")


def subset_losses(population: object) -> np.ndarray:
    """Return the minimal total loss of one service shared by each subset of users.

    Entry ``mask`` (a bit per user) is ``min_theta sum_{i in mask} f_i(theta)``;
    entry 0 is 0.
    """
    _check(population, 1)
    n = int(population.n)  # type: ignore[attr-defined]
    costs = np.zeros(1 << n)
    for mask in range(1, 1 << n):
        users = np.flatnonzero([(mask >> i) & 1 for i in range(n)])
        part = population.take(users)  # type: ignore[attr-defined]
        start = population.preferences[users[:1]].astype(float)  # type: ignore[attr-defined]
        theta = part.refit(start, np.zeros(len(users), dtype=np.int64))
        costs[mask] = float(part.loss_at(theta[0]).sum())
    return costs


def exact_optimum(population: object, k: int, costs: np.ndarray | None = None) -> float:
    """Return ``L(Theta*)``: the least total loss of any ``k`` services, placed anywhere.

    The minimum over partitions of the users into at most ``k`` parts of the
    sum of :func:`subset_losses` of the parts (exact: see the module).

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> env = gym.make("MultiServiceChoice-v0", n_users=4, n_services=2, dim=1, world_seed=0)
    >>> _ = env.reset(seed=0)
    >>> world = env.unwrapped._world
    >>> exact_optimum(world, 4)  # a service at every user's preference
    0.0
    """
    _check(population, k)
    n = int(population.n)  # type: ignore[attr-defined]
    costs = subset_losses(population) if costs is None else costs
    full = (1 << n) - 1
    best = costs.copy()  # best[mask] with at most j parts, j = 1
    for _ in range(k - 1):
        new = best.copy()
        for mask in range(1, full + 1):
            low = mask & -mask  # the part holding the lowest user: each partition once
            rest = mask ^ low
            sub = rest
            while True:
                part = sub | low
                value = costs[part] + best[mask ^ part]
                if value < new[mask]:
                    new[mask] = value
                if sub == 0:
                    break
                sub = (sub - 1) & rest
        best = new
    return float(best[full])


def preference_optimum(population: object, k: int) -> float:
    """Return the least total loss of ``k`` services at users' own preferences (>= optimum)."""
    _check(population, k)
    losses = population.loss_matrix(population.preferences)  # type: ignore[attr-defined]
    n = losses.shape[0]
    return float(
        min(losses[:, list(c)].min(axis=1).sum() for c in itertools.combinations(range(n), k))
    )


def acquire_expectation(population: object, k: int) -> float:
    """Return AcQUIre's expected total loss with ``k`` services, exactly.

    Algorithm 1 as the agent runs it: the first user uniformly, then user
    ``j`` with probability ``l_j / sum_i l_i`` among users not yet acquired
    (uniformly among them when every loss is 0).
    """
    _check(population, k)
    losses = population.loss_matrix(population.preferences)  # type: ignore[attr-defined]
    n = losses.shape[0]

    def expect(current: np.ndarray, taken: tuple[int, ...]) -> float:
        if len(taken) == k:
            return float(current.sum())
        free = np.ones(n, dtype=bool)
        free[list(taken)] = False
        weights = np.where(free, current, 0.0) if taken else free.astype(float)
        if weights.sum() <= 0:
            weights = free.astype(float)
        p = weights / weights.sum()
        return sum(
            p[j] * expect(np.minimum(current, losses[:, j]), (*taken, int(j)))
            for j in np.flatnonzero(p > 0)
        )

    return expect(np.full(n, np.inf), ())


@dataclass(frozen=True)
class Case:
    """A tiny population: the env's arguments (its world fixed by ``world_seed``)."""

    label: str
    loss: str
    n_users: int = 10
    dim: int = 2
    n_clusters: int = 3


CASES = (
    Case("squared", "squared"),
    Case("Mahalanobis", "mahalanobis"),
    Case("cosine (d=3)", "cosine", dim=3),
)


def bound(loss: str, k: int) -> float:
    """Return Theorem 1's factor where its constant is known: ``8 (ln k + 2)`` (squared)."""
    return 8 * (math.log(k) + 2) if loss == "squared" else math.nan


def measure(
    cases: tuple[Case, ...] = CASES,
    ks: tuple[int, ...] = (2, 3, 4),
    worlds: tuple[int, ...] = tuple(range(5)),
    episodes: int = 200,
) -> pd.DataFrame:
    """Run the AcQUIre agent on each tiny world and compare with the exact optima.

    A row per (case, world, k): ``optimum`` (exact, anywhere), ``at_preferences``
    (best ``k`` users' preferences), the agent's mean ratio to the optimum over
    ``episodes`` seeds with its standard error and 95% CI (normal, mean of
    ``episodes`` i.i.d. ratios), its largest ratio, the exact expected ratio,
    ``ln k + 2`` and the bound where its constant is known.
    """
    from agents.services.acquire import AcQUIre
    from osfb_gym.runner import run_episode

    if episodes < 2:
        raise ValueError(f"episodes must be >= 2, got {episodes}")
    rows = []
    for case, world_seed, k in itertools.product(cases, worlds, ks):
        env = gym.make(
            "MultiServiceChoice-v0",
            n_users=case.n_users,
            n_services=k,
            loss=case.loss,
            dim=case.dim,
            n_clusters=case.n_clusters,
            world_seed=world_seed,
            reference_restarts=0,
        )
        env.reset(seed=0)
        world = env.unwrapped._world  # type: ignore[attr-defined]
        optimum = exact_optimum(world, k)
        losses = np.array(
            [run_episode(env, AcQUIre(), seed=s).metrics["total_loss"] for s in range(episodes)]
        )
        env.close()
        ratios = losses / optimum
        sem = float(ratios.std(ddof=1) / np.sqrt(episodes))
        mean = float(ratios.mean())
        rows.append(
            {
                "population": case.label,
                "world": world_seed,
                "k": k,
                "optimum": optimum,
                "at_preferences": preference_optimum(world, k),
                "ratio_mean": mean,
                "ratio_sem": sem,
                "ci_low": mean - 1.96 * sem,
                "ci_high": mean + 1.96 * sem,
                "ratio_max": float(ratios.max()),
                "exact_expected_ratio": acquire_expectation(world, k) / optimum,
                "ln_k_plus_2": math.log(k) + 2,
                "bound": bound(case.loss, k),
            }
        )
    return pd.DataFrame(rows)


def section(frame: pd.DataFrame) -> str:
    """Return the page's section on Theorem 1 from :func:`measure`'s rows (markdown)."""
    shown = frame.groupby(["population", "k"], sort=False).agg(
        worlds=("world", "count"),
        mean_ratio=("ratio_mean", "mean"),
        worst_world_ci_high=("ci_high", "max"),
        worst_exact_expected=("exact_expected_ratio", "max"),
        worst_episode=("ratio_max", "max"),
        preferences_over_optimum=("at_preferences", "max"),
        bound=("bound", "first"),
        ln_k_plus_2=("ln_k_plus_2", "first"),
    )
    shown["preferences_over_optimum"] = (
        frame.assign(r=frame["at_preferences"] / frame["optimum"])
        .groupby(["population", "k"], sort=False)["r"]
        .max()
    )
    below = frame[frame["bound"].notna()]
    held = bool((below["exact_expected_ratio"] < below["bound"]).all())
    held_ci = bool((below["ci_high"] < below["bound"]).all())
    over = int((frame["exact_expected_ratio"] > frame["ln_k_plus_2"]).sum())
    verdict = (
        "On every squared world AcQUIre's exact expected ratio, and the upper end of the "
        "agent's measured CI, lie below 8 (ln k + 2): the theorem's inequality holds on "
        "these instances (a check on instances, not a proof; the bound is loose here)."
        if held and held_ci
        else "On some squared world the expected ratio or its CI reaches 8 (ln k + 2): "
        "see the table."
    )
    return "\n\n".join(
        [
            "## Theorem 1 against exact optima",
            "Tiny worlds (10 users, 3 preference clusters, world seeds 0-"
            f"{frame['world'].max()}) where the optimum of Definition 2.1, k services "
            "placed anywhere, is computed exactly by enumerating every partition of the "
            "users (the best service of a part is in closed form for these families). "
            "`mean_ratio`: the mean over worlds of the AcQUIre agent's mean ratio "
            "L / L(Theta*) over its episodes (one seed each); `worst_world_ci_high`: the "
            "largest upper end over worlds of that mean's 95% normal CI; "
            "`worst_exact_expected`: the largest over worlds of AcQUIre's exact expected "
            "ratio, summed over every sequence of picks with Algorithm 1's probabilities "
            "(no sampling error); `worst_episode`: the largest ratio of any episode; "
            "`preferences_over_optimum`: the best k services at users' own preferences "
            "over the optimum (largest over worlds), what a reference restricted to "
            "preferences would overstate.",
            shown.reset_index().to_markdown(index=False, floatfmt=".3g"),
            "With the unweighted squared loss AcQUIre is k-means++ seeding, and Arthur and "
            "Vassilvitskii's bound E[L] <= 8 (ln k + 2) L(Theta*) applies as it stands "
            "(`bound`); Theorem 1 replaces their 8 by the constant of its eq. 2, which "
            "depends on the loss geometries and is lost from our copy of the paper, so no "
            "bound is shown for the other families. " + verdict + f" In {over} of "
            f"{len(frame)} (world, k) rows the exact expected ratio exceeds ln k + 2 "
            "itself: the constant matters, the ratio is not below ln k + 2 alone.",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    """Measure with the defaults; write ``theorem1.csv`` and ``theorem1.md`` into a folder."""
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--episodes", type=int, default=400)
    parser.add_argument("--worlds", type=int, default=10)
    args = parser.parse_args(argv)
    frame = measure(worlds=tuple(range(args.worlds)), episodes=args.episodes)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out_dir / "theorem1.csv", index=False)
    (args.out_dir / "theorem1.md").write_text(section(frame) + "\n")
    print(section(frame))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
