"""Results no agent can reach: checks of a graded episode against its family's floor.

The process boundary keeps a submission away from the env, the runner and
the metrics; these checks are the second line. They read only the
:class:`~osfb_gym.runner.Trajectory` the runner returned (its per-step
oracle losses, computed by the env, and the metrics, computed by the
metrics class), and flag what no agent could score:

- every family: a per-step loss that is negative or not finite (the Bayes
  rule's loss is the floor, and it is never below 0), or episode metrics
  whose ``cumulative_loss`` is not the sum of the per-step losses;
- lending: a one-sided loss of 0 although some decision differed from the
  Bayes rule (each such decision costs ``|mu - c| > 0`` unless the
  applicant sits exactly at the cutoff), a loss above 0 although every
  decision matched it, or rates outside [0, 1];
- apple tasting: counts that do not add up to the steps, an F1 that is not
  the one of the counts;
- reject option: an average risk below the Bayes risk of the same examples
  by more than chance allows (Azuma-Hoeffding at :data:`IMPOSSIBLE_P`:
  the risk minus the Bayes risk of a step lies in [-1, 1] and has a
  non-negative conditional mean for any agent);
- services: a negative total loss.

A third line reads the whole grading (:func:`implausible`): a submission
that beats every reference is compared with the same reference learners
shown **every** outcome (``feedback="full"``) on the same worlds and
seeds, an oracle-informed bound a one-sided learner has no business
beating by far. An objective better than :data:`IMPLAUSIBLE_FRACTION` of
the best of them on every episode is what knowledge from outside the
episode gives (the public file's labels or fit, a searched seed), not
learning from one-sided feedback; it is reported as SUSPICIOUS, never as
better.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from osfb_gym.runner import Trajectory

#: a result whose probability under any agent is below this counts as impossible
IMPOSSIBLE_P = 1e-6
#: a one-sided objective below this share of the best full-information reference's is implausible
IMPLAUSIBLE_FRACTION = 0.6


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def _common(trajectory: Trajectory) -> list[str]:
    losses = np.asarray(trajectory.oracle_loss, dtype=float)
    reasons = []
    if not np.isfinite(losses).all():
        reasons.append("a per-step loss is not finite")
    elif (losses < 0).any():
        step = int(np.flatnonzero(losses < 0)[0]) + 1
        reasons.append(
            f"the loss of step {step} is {losses[step - 1]:.4g}, below 0, the loss of the "
            "Bayes rule (no agent does better)"
        )
    cumulative = trajectory.metrics.get("cumulative_loss")
    if cumulative is not None and not _close(float(cumulative), float(losses.sum())):
        reasons.append(
            f"the episode metrics give a cumulative_loss of {float(cumulative):.6g}, but the "
            f"per-step losses add up to {float(losses.sum()):.6g}"
        )
    return reasons


def _lending(trajectory: Trajectory) -> list[str]:
    metrics, loss = trajectory.metrics, float(np.sum(trajectory.oracle_loss))
    reasons = []
    wrong = metrics.get("wrongly_approved", 0.0) + metrics.get("wrongly_denied", 0.0)
    if wrong > 0 and loss == 0:
        reasons.append(
            f"the one-sided loss is 0 although {wrong:g} decisions differed from the Bayes "
            "rule; each costs |mu - c| > 0 (only an applicant exactly at the cutoff costs 0)"
        )
    if wrong == 0 and loss > 0:
        reasons.append(
            f"every decision matched the Bayes rule, yet the one-sided loss is {loss:.4g} (a "
            "decision that matches it costs 0)"
        )
    for name in ("approval_rate", "bayes_agreement"):
        if name in metrics and not 0.0 <= metrics[name] <= 1.0:
            reasons.append(f"{name} is {metrics[name]:.4g}, outside [0, 1]")
    return reasons


def _apple(trajectory: Trajectory) -> list[str]:
    metrics = trajectory.metrics
    counts = [metrics.get(key, 0.0) for key in ("tp", "fp", "tn", "fn")]
    tp, fp, _, fn = counts
    reasons = []
    if sum(counts) != metrics.get("steps", sum(counts)) or min(counts) < 0:
        reasons.append(f"the counts tp, fp, tn, fn = {counts} do not add up to the steps")
    f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    if "f1" in metrics and not _close(float(metrics["f1"]), f1):
        reasons.append(f"f1 is {metrics['f1']:.4g}, but the counts give {f1:.4g}")
    return reasons


def _reject(trajectory: Trajectory) -> list[str]:
    metrics = trajectory.metrics
    steps, risk, bayes = (
        float(metrics.get(key, np.nan)) for key in ("steps", "average_risk", "bayes_risk")
    )
    if not (np.isfinite(bayes) and np.isfinite(risk) and steps > 0):
        return []  # a dataset: its posterior, and so its Bayes risk, is unknown
    margin = math.sqrt(2 * math.log(1 / IMPOSSIBLE_P) / steps)
    if risk < bayes - margin:
        return [
            f"the average risk {risk:.4g} is below the Bayes risk {bayes:.4g} of the same "
            f"examples by more than {margin:.3g}, which no agent reaches with probability "
            f"{IMPOSSIBLE_P:g} over {steps:g} steps"
        ]
    return []


def _services(trajectory: Trajectory) -> list[str]:
    total = trajectory.metrics.get("total_loss")
    if total is not None and total < 0:
        return [f"the total loss is {total:.4g}; users' losses are never negative"]
    return []


CHECKS: dict[str, Callable[[Trajectory], list[str]]] = {
    "lending": _lending,
    "apple": _apple,
    "reject": _reject,
    "services": _services,
}


def impossible(family: str, trajectory: Trajectory) -> list[str]:
    """Return why the episode ``trajectory`` of ``family`` is impossible (empty if it is not).

    Examples
    --------
    >>> honest = Trajectory(
    ...     rewards=np.zeros(2), oracle_loss=np.array([0.5, 0.0]), actions=np.ones((2, 1)),
    ...     n_revealed=np.ones(2),
    ...     metrics={"steps": 2.0, "cumulative_loss": 0.5, "wrongly_approved": 1.0,
    ...              "wrongly_denied": 0.0})
    >>> impossible("lending", honest)
    []
    >>> honest.metrics["cumulative_loss"] = 0.0
    >>> impossible("lending", honest)
    ['the episode metrics give a cumulative_loss of 0, but the per-step losses add up to 0.5']
    """
    return _common(trajectory) + CHECKS[family](trajectory)


def implausible(
    mine: dict[int, float], bounds: dict[str, dict[int, float]], *, lower_is_better: bool
) -> list[str]:
    """Return why a grading's objective is implausibly good (empty if it is not).

    ``mine`` maps each episode seed to the submission's objective,
    ``bounds`` each full-information reference (a reference learner shown
    every outcome, on the same worlds and seeds) to its own. Flagged: an
    objective better than the best reference's on every seed, and, on
    average, better than :data:`IMPLAUSIBLE_FRACTION` of it (for a score
    where higher is better, beyond it by that share of its distance to 0).

    Examples
    --------
    >>> implausible({1: 0.0, 2: 0.5}, {"Greedy (full)": {1: 9.0, 2: 11.0}}, lower_is_better=True)
    ['mean objective 0.25 against 10 of Greedy (full), a reference learner shown every outcome \
(one-sided feedback shows fewer), and better on every one of 2 episodes: knowledge from outside \
the episode (the public data, a searched seed), not learning']
    >>> implausible({1: 6.0}, {"Greedy (full)": {1: 9.0}}, lower_is_better=True)
    []
    """
    if not mine or not bounds:
        return []
    seeds = sorted(mine)
    sign = 1.0 if lower_is_better else -1.0
    means = {name: float(np.mean([values[s] for s in seeds])) for name, values in bounds.items()}
    best = min(means, key=lambda name: sign * means[name])
    ours = float(np.mean([mine[s] for s in seeds]))
    every = all(sign * (mine[s] - bounds[best][s]) < 0 for s in seeds)
    bound = means[best]
    far = (
        (ours < IMPLAUSIBLE_FRACTION * bound)
        if lower_is_better
        else (ours > bound + IMPLAUSIBLE_FRACTION * abs(bound))
    )
    if not (every and far):
        return []
    return [
        f"mean objective {ours:.4g} against {bound:.4g} of {best}, a reference learner shown "
        f"every outcome (one-sided feedback shows fewer), and better on every one of "
        f"{len(seeds)} episodes: knowledge from outside the episode (the public data, a "
        "searched seed), not learning"
    ]
