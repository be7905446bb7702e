"""Write your own agent: an explore-then-commit lender, scored beside the papers..

An agent is a class with four methods (see ``agents/agent.py`` and
``docs/agents.md``): ``__init__`` stores hyperparameters only (and
``_parameter_constraints`` says what each may be; ``reset`` checks them),
``reset`` creates the learned state (names ending in ``_``) and seeds
``self.rng_``, ``act`` returns an action in the env's action space, ``update``
learns from what the step revealed. ``check_agent`` checks the whole contract. The runner
(``osfb_gym.runner``) is the only code that sees the hidden truth; your agent
gets the feedback alone.

    python examples/write_your_own_agent.py          # about 10 s
    python examples/write_your_own_agent.py --fast

To have it graded like a course assignment, put the class in its own file and
run ``osfb-bench grade my_agent.py --env OneSidedLending-v0``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import osfb_gym  # noqa: F401  (registers the environment ids)
from agents.base import Agent, Integral, Interval, Real, check_agent
from agents.lending import Adaptive, Greedy
from osfb_gym.bench.report import plot_average_loss
from osfb_gym.runner import evaluate


class ExploreThenCommit(Agent):
    """Approve everyone for ``n_explore`` applicants, then approve by a ridge fit.

    Not a paper's method: the simplest agent that explores at all. It pays
    for every bad applicant it approves while exploring, which is why
    Adaptive explores only where its estimate is uncertain.

    Parameters
    ----------
    n_explore
        Applicants approved unconditionally at the start.
    l2
        Ridge strength of the fit.
    """

    env_ids = ("OneSidedLending-v0",)
    _parameter_constraints = {
        "n_explore": [Interval(Integral, 0, None, closed="left")],
        "l2": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, n_explore: int = 100, l2: float = 1.0) -> None:
        self.n_explore = n_explore
        self.l2 = l2

    def reset(self, observation_space, action_space, *, seed=None, feedback=None):
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        dim = observation_space.shape[-1]
        self.cutoff_ = feedback["cutoff"]
        warm = feedback["warm_start"]  # the labelled warm-start sample
        self.A_ = self.l2 * np.eye(dim) + warm["X"].T @ warm["X"]
        self.b_ = warm["X"].T @ warm["y"]
        self.seen_ = 0

    def act(self, observation):
        self.seen_ += len(observation)
        if self.seen_ <= self.n_explore:
            return np.ones(len(observation), dtype=np.int8)
        beta = np.linalg.solve(self.A_, self.b_)
        return (observation @ beta > self.cutoff_).astype(np.int8)

    def update(self, observation, action, reward, feedback):
        X = observation[feedback["revealed"]]
        self.A_ += X.T @ X
        self.b_ += X.T @ feedback["y"][feedback["revealed"]]


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--seeds", type=int, default=10, help="episodes per agent")
parser.add_argument("--horizon", type=int, default=2000, help="applicants per episode (T)")
parser.add_argument("--out", default="examples-output/own-agent", help="folder for the plot")
parser.add_argument("--fast", action="store_true", help="2 seeds of T = 150 (for the tests)")
args = parser.parse_args()
Path(args.out).mkdir(parents=True, exist_ok=True)
if args.fast:
    args.seeds, args.horizon = 2, 150

# Blanket exploration is costly: try n_explore=0 (greedy) and n_explore=200.
mine = ExploreThenCommit(n_explore=20)
print(mine, "->", mine.get_params(), "; clone:", mine.clone())  # what the bench relies on
check_agent(ExploreThenCommit)  # the contract the tests and the grader check; raises if broken

curves = {}
print("| agent | cumulative one-sided loss (mean ± s.e.) | approval rate |\n|---|---|---|")
for agent in (mine, Greedy(), Adaptive()):
    frame, trajectories = evaluate(
        "OneSidedLending-v0",
        agent,
        seeds=range(args.seeds),
        env_kwargs={"horizon": args.horizon, "link": "linear", "scenario": "greedy_trap"},
        return_trajectories=True,
    )
    loss = frame["cumulative_loss"]
    rate = frame["approval_rate"].mean()
    print(f"| {type(agent).__name__} | {loss.mean():.2f} ± {loss.sem():.2f} | {rate:.3f} |")
    curves[("greedy trap, linear link", type(agent).__name__)] = np.stack(
        [t.average_loss for t in trajectories]
    )

plot = plot_average_loss(
    curves, Path(args.out) / "own_agent.png", title="your agent vs the papers'"
)
print(f"plot: {plot}")
