"""The project's copy of rliable against rliable 1.2.0 on shared inputs.

Recorded: ``rliable_reference.json`` holds rliable's numbers (10,000
stratified-bootstrap resamples, computed in a separate environment with
arch 7 and pandas<3 by ``rliable_reference.py``); the point estimates must
agree to rounding and each CI end within Monte-Carlo error. Live: where
rliable imports, a comparison runs against it directly. In the environment of
rliable_reference.py (plus pytest, hypothesis and gymnasium; the osfb_gym
package needs no more for this file)::

    PYTHONPATH=. /tmp/rlvenv/bin/python -m pytest --noconftest -o addopts="" \
        tests/osfb_gym/stats/test_rliable_agreement.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from osfb_gym.stats import aggregates

_RECORD = Path(__file__).with_name("rliable_reference.json")
if not _RECORD.is_file():
    pytest.skip(
        "rliable_reference.json is missing: run rliable_reference.py in an environment with "
        "rliable 1.2.0 (see its docstring)",
        allow_module_level=True,
    )
REFERENCE = json.loads(_RECORD.read_text())
REPS = 20_000
#: a CI end may differ from rliable's by this fraction of the CI's width: two
#: percentile bootstraps (ours 20,000 resamples, rliable's 10,000, other
#: generators) differ by their Monte-Carlo error, and with 5 runs the resampled
#: means take few values, so an end can move by one step; measured at most 5.8%
#: of the width on these inputs (one task, 5 runs, the mean), 3.2% elsewhere
WIDTH_TOLERANCE = 0.08
PAIRS = {
    "one_task": ("one_task_5_runs_a", "one_task_5_runs_b"),
    "three_tasks": ("three_tasks_10_runs_a", "three_tasks_10_runs_b"),
    "five_tasks": ("five_tasks_20_runs_ties", "five_tasks_20_runs_ties_b"),
}


def _close(ours: tuple[float, float], theirs: list[float]) -> None:
    width = max(theirs[1] - theirs[0], 1e-12)
    assert abs(ours[0] - theirs[0]) <= WIDTH_TOLERANCE * width + 1e-12, (ours, theirs)
    assert abs(ours[1] - theirs[1]) <= WIDTH_TOLERANCE * width + 1e-12, (ours, theirs)


def _scores(name: str) -> np.ndarray:
    return np.asarray(REFERENCE["inputs"][name])


@pytest.mark.parametrize("name", sorted(REFERENCE["aggregates"]))
def test_iqm_and_mean_agree_with_recorded_rliable(name):
    theirs = REFERENCE["aggregates"][name]
    for statistic in ("iqm", "mean"):
        value, low, high = aggregates.interval(_scores(name), statistic, reps=REPS, seed=1)
        assert value == pytest.approx(theirs[statistic], abs=1e-12)
        _close((low, high), theirs[f"{statistic}_ci"])


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_probability_of_improvement_agrees_with_recorded_rliable(pair):
    theirs = REFERENCE["probability_of_improvement"][pair]
    x, y = (_scores(name) for name in PAIRS[pair])
    value, low, high = aggregates.probability_of_improvement(x, y, reps=REPS, seed=1)
    assert value == pytest.approx(theirs["value"], abs=1e-12)
    _close((low, high), theirs["ci"])


@pytest.mark.parametrize("name", sorted(REFERENCE["profiles"]))
def test_performance_profile_agrees_with_recorded_rliable(name):
    theirs = REFERENCE["profiles"][name]
    value, low, high = aggregates.performance_profile(
        _scores(name), REFERENCE["taus"], reps=REPS, seed=1
    )
    np.testing.assert_allclose(value, theirs["value"], atol=1e-12)
    for i in range(len(value)):
        _close((low[i], high[i]), [theirs["low"][i], theirs["high"][i]])


def test_live_rliable_agrees():
    pytest.importorskip(
        "rliable",
        reason="rliable is not installed (its bootstrap needs arch 7 and pandas<3); the "
        "recorded comparison above ran instead",
    )
    from rliable import library as rly
    from rliable import metrics

    rng = np.random.default_rng(7)
    scores = {"a": rng.normal(size=(8, 3)), "b": rng.exponential(size=(8, 3))}
    points, cis = rly.get_interval_estimates(
        scores, lambda x: np.array([metrics.aggregate_iqm(x)]), reps=REPS
    )
    for name, matrix in scores.items():
        value, low, high = aggregates.interval(matrix, "iqm", reps=REPS, seed=2)
        assert value == pytest.approx(float(points[name][0]), abs=1e-12)
        _close((low, high), [float(cis[name][0, 0]), float(cis[name][1, 0])])
    poi = metrics.probability_of_improvement(scores["a"], scores["b"])
    assert aggregates.probability_of_improvement(scores["a"], scores["b"])[0] == pytest.approx(poi)
