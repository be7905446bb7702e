"""The built-in suites: one package per paper reproduction, the RL comparison and ``quick``.

Each package holds a suite's frozen settings dataclass, ``stages(settings)``,
``report(rows, settings, run)``, and the code only it uses; the driver
(:mod:`osfb_gym.bench.driver`) runs them all the same way. :data:`SUITES`
names them for ``osfb-bench``; this module imports nothing heavy.

>>> from osfb_gym.bench.suites import run  # doctest: +SKIP
>>> report = run("liu-outcome-curves", "out/liu", rates=101)  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from osfb_gym.bench import driver
from osfb_gym.bench.driver import RunOptions, Suite

_HERE = "osfb_gym.bench.suites."
#: where the measured costs below were written down
_BENCH, _RESULTS = "docs/benchmark.md", "docs/results/"

SUITES: dict[str, Suite] = {
    suite.name: suite
    for suite in (
        Suite(
            "quick",
            "every env family, its principled agents and PPO after equal experience (the main job)",
            f"{_HERE}quick",
            cost="99 s of CPU with 1 worker; wall time follows the machine's load: 7 min 55 s on "
            f"a 2-core VM at load average 7-9 ({_BENCH}, Speed, measured 2026-11-28)",
        ),
        Suite(
            "jiang-linear",
            "Jiang et al. 2021, Table 1 (linear link, real datasets)",
            f"{_HERE}jiang",
            "LinearSettings",
            "122 CPU minutes (91 + 31: two processes, the run stopped once and resumed) for "
            "the default 17,000 episodes with fit=paper; the legacy fit's took 37 CPU minutes, "
            f"19 min 27 s of wall time with --workers 2 ({_RESULTS}jiang-linear.md)",
        ),
        Suite(
            "jiang-logistic",
            "Jiang et al. 2021, Table 2 (logistic link, real datasets)",
            f"{_HERE}jiang",
            "LogisticSettings",
            "fit=paper: 65 min of wall time for the first 7,140 episodes at load 10-27 (CPU "
            "not recorded), 10 min 52 s and 604 CPU s for the other 9,860; the legacy fit's "
            f"17,000: 19 min 40 s wall, 1,947 CPU s, --workers 2 ({_RESULTS}jiang-logistic.md)",
        ),
        Suite(
            "sculley-spam",
            "Sculley 2007, apple tasting on spam streams",
            f"{_HERE}sculley",
            "SpamSettings",
            "1 h 53 min of wall time and 1,520 CPU s with --workers 2 at load average 17-23, "
            "a second command's 360 CPU s beside it, 150 earlier episodes reused from a store "
            f"({_RESULTS}sculley-spam.md, 2026-11-23)",
        ),
        Suite(
            "sculley-reuters",
            "Sculley 2007, minority topics of Reuters R8",
            f"{_HERE}sculley",
            "ReutersSettings",
            f"41.0 min, one process, 2,808 episodes ({_RESULTS}sculley-reuters.md)",
        ),
        Suite(
            "shah-reject",
            "Shah and Manwani 2020, online reject option",
            f"{_HERE}shah",
            cost="phishing 39 min of wall time with --workers 2; guide's last invocation "
            "(resumed after a stop) 67.4 min with 1 worker at load average 10-25 (the datasets "
            f"run apart; {_RESULTS}shah-reject.md)",
        ),
        Suite(
            "bose-services",
            "Bose et al. (AcQUIre), multi-service user choice",
            f"{_HERE}bose",
            cost="3 min 7 s of wall time, 55 s of user CPU (1 worker) on a 2-core VM at load "
            f"average 4-5, MovieLens 10M absent ({_RESULTS}bose-services.md, its header, "
            "28 Nov 2026)",
        ),
        Suite(
            "rl-vs-principled",
            "does generic RL beat the principled agents? equal experience, the same tuning "
            "budget for both sides, 10 runs, paired exact tests with Holm",
            f"{_HERE}rl_vs_principled",
            "Protocol",
            "extrapolated, not run end to end: 77-123 worker-minutes (38-60 CPU minutes) from "
            "the per-cell times of a measured slice of the default (40 cells, 1 run and 1 "
            "validation run each: 9 min 47 s, 288 s of CPU, on a 2-core VM at load average 6-7) "
            "times the default's 80 validation and 200-300 test cells; --set n_envs=16 (native "
            "vector envs): 36-57 (docs/reproductions/rl-vs-principled.md, Cost)",
        ),
        Suite(
            "liu-outcome-curves",
            "Liu et al. 2018, delayed impact: outcome curves and operating points on the FICO "
            "tables (exact, no episodes)",
            f"{_HERE}liu",
            cost="9.7 s of wall time (2.8 s of CPU), one process, no episodes: an exact "
            f"computation on the tables ({_RESULTS}liu-outcome-curves.md, 28 Nov 2026)",
        ),
        Suite(
            "dynamic-lending",
            "D'Amour et al. 2020 (ml-fairness-gym's lending experiment): max-reward against "
            "equal-opportunity lenders over a long horizon",
            f"{_HERE}dynamic_lending",
            cost="11 min of wall time with --workers 2 on a 2-core VM at load average 7-8 (the "
            "cells' own timings add up to 1,283 s; FICO equal-opportunity cells 45 s each) "
            f"({_RESULTS}dynamic-lending.md, its header, 28 Nov 2026)",
        ),
    )
}
#: other names of suites: the issues' names and the old name of bose-services
ALIASES: dict[str, str] = {
    "reject-option": "shah-reject",
    "acquire": "bose-services",
    "dean-services": "bose-services",
    "sculley-minority": "sculley-reuters",
    "rl-vs-bandit": "rl-vs-principled",
    "liu": "liu-outcome-curves",
    "delayed-impact": "liu-outcome-curves",
    "fairness-gym-lending": "dynamic-lending",
}


def get(name: str) -> Suite:
    """Return the built-in suite called ``name`` (or an alias of it); else raise naming them."""
    suite = SUITES.get(ALIASES.get(name, name))
    if suite is None:
        raise ValueError(f"unknown suite {name!r}; choose one of {', '.join([*SUITES, *ALIASES])}")
    return suite


def run(name: str, out: str | Path, options: RunOptions | None = None, **settings: Any) -> Any:
    """Run built-in suite ``name`` into ``out`` (:func:`osfb_gym.bench.driver.run`).

    ``options``: the flags (seeds, horizon, data home, --set text, workers, ...);
    ``settings``: fields of the suite's settings as Python values.
    """
    return driver.run(get(name), out, options, **settings)
