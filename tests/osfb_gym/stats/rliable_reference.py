"""Write rliable_reference.json: rliable 1.2.0's numbers on shared inputs.

rliable's bootstrap needs ``arch`` 7 and ``pandas<3``, which the project's
environment does not pin, so the reference is computed in a separate
environment and recorded; test_rliable_agreement.py compares the project's
copy (osfb_gym.stats.aggregates) with it, and with rliable itself when it
imports. To regenerate::

    python -m venv /tmp/rlvenv
    /tmp/rlvenv/bin/pip install "numpy<2.5" scipy "pandas<3" "arch==7.*" rliable==1.2.0
    /tmp/rlvenv/bin/python tests/osfb_gym/stats/rliable_reference.py

The script imports numpy and rliable only (not osfb_gym).
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np

REPS = 10_000  # rliable defaults to 50,000; arch resamples in Python, so this keeps it minutes
TAUS = [0.25, 0.5, 1.0, 1.5]


def inputs() -> dict[str, list[list[float]]]:
    """The shared score matrices, (runs, tasks): the shapes the suites produce."""
    rng = np.random.default_rng(20261128)
    return {
        "one_task_5_runs_a": rng.normal(0.5, 0.2, (5, 1)).tolist(),
        "one_task_5_runs_b": rng.normal(0.7, 0.3, (5, 1)).tolist(),
        "three_tasks_10_runs_a": rng.lognormal(0.0, 0.5, (10, 3)).tolist(),
        "three_tasks_10_runs_b": rng.lognormal(0.2, 0.5, (10, 3)).tolist(),
        "five_tasks_20_runs_ties": rng.integers(0, 4, (20, 5)).astype(float).tolist(),
        "five_tasks_20_runs_ties_b": rng.integers(1, 5, (20, 5)).astype(float).tolist(),
    }


def main() -> None:
    """Compute rliable's estimates and write them beside this file."""
    from rliable import library as rly
    from rliable import metrics

    def both(x: np.ndarray) -> np.ndarray:
        return np.array([metrics.aggregate_iqm(x), metrics.aggregate_mean(x)])

    scores = {name: np.asarray(value) for name, value in inputs().items()}
    points, intervals = rly.get_interval_estimates(scores, both, reps=REPS)
    pairs = {
        "one_task": (scores["one_task_5_runs_a"], scores["one_task_5_runs_b"]),
        "three_tasks": (scores["three_tasks_10_runs_a"], scores["three_tasks_10_runs_b"]),
        "five_tasks": (scores["five_tasks_20_runs_ties"], scores["five_tasks_20_runs_ties_b"]),
    }
    poi, poi_ci = rly.get_interval_estimates(pairs, metrics.probability_of_improvement, reps=REPS)
    profile, profile_ci = rly.create_performance_profile(scores, TAUS, reps=REPS)
    record = {
        "rliable": version("rliable"),
        "arch": version("arch"),
        "pandas": version("pandas"),
        "numpy": version("numpy"),
        "python": sys.version.split()[0],
        "reps": REPS,
        "taus": TAUS,
        "inputs": inputs(),
        "aggregates": {
            name: {
                "iqm": float(points[name][0]),
                "mean": float(points[name][1]),
                "iqm_ci": [float(v) for v in intervals[name][:, 0]],
                "mean_ci": [float(v) for v in intervals[name][:, 1]],
            }
            for name in scores
        },
        "probability_of_improvement": {
            name: {"value": float(poi[name]), "ci": [float(v) for v in poi_ci[name].ravel()]}
            for name in pairs
        },
        "profiles": {
            name: {
                "value": [float(v) for v in profile[name]],
                "low": [float(v) for v in profile_ci[name][0]],
                "high": [float(v) for v in profile_ci[name][1]],
            }
            for name in scores
        },
    }
    out = Path(__file__).with_name("rliable_reference.json")
    out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
