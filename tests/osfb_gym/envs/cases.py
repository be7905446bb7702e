"""Environment cases every generic test runs on: each registered id, plus variants.

A new id in ``envs_registry.ENVS`` is covered automatically; list here the
keyword variants whose code paths differ (links, scenarios, feedback modes,
dataset-backed worlds).
"""

from __future__ import annotations

from typing import Any

import pytest

from envs_registry import env_ids
from osfb_gym.data.registry import get_spec
from tests.helpers import needs_osfb_data, osfb_data

# The papers' datasets, from ``OSFB_DATA`` only; without it, the cases that need
# them skip with the data layer's message (tests.helpers.skip_reason).
_ROOT = osfb_data()
DATA_HOME = str(_ROOT) if _ROOT is not None else None
# Reading and fitting these takes seconds (Adult: 48,842 rows), so their cases
# run with ``-m slow``; the small ones keep the default run covered.
SLOW_DATASETS = frozenset({"adult", "bank", "eeg", "reuters_r8"})

VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("OneSidedLending-v0", {"batch_size": 4, "horizon": 30}),
    ("OneSidedLending-v0", {"link": "linear", "batch_size": 3, "horizon": 30}),
    ("OneSidedLending-v0", {"scenario": "greedy_trap", "batch_size": 5, "horizon": 30}),
    ("OneSidedLending-v0", {"link": "linear", "scenario": "greedy_trap", "horizon": 30}),
    ("OneSidedLending-v0", {"feedback": "full", "batch_size": 3, "horizon": 30}),
    ("OneSidedLending-v0", {"world_seed": 5, "dim": 2, "warm_start": 0, "horizon": 30}),
    # dataset-backed worlds: breast_cancer ships with scikit-learn, so it runs everywhere
    ("OneSidedLending-v0", {"dataset": "breast_cancer"}),
    ("OneSidedLending-v0", {"dataset": "breast_cancer", "link": "linear", "batch_size": 10}),
    # 541 streamed rows in batches of 60: the stream runs out after 9 steps, inside
    # the rollouts, so termination and the vector env's autoreset are exercised
    ("OneSidedLending-v0", {"dataset": "breast_cancer", "batch_size": 60, "feedback": "full"}),
    ("OneSidedLending-v0", {"dataset": "german", "data_home": DATA_HOME}),
    (
        "OneSidedLending-v0",
        {"dataset": "german", "data_home": DATA_HOME, "link": "linear", "batch_size": 10},
    ),
    (
        "OneSidedLending-v0",
        {"dataset": "adult", "data_home": DATA_HOME, "batch_size": 100, "horizon": 20},
    ),
    ("AppleTasting-v0", {"dim": 3, "noise": 0.1, "horizon": 30}),
    ("AppleTasting-v0", {"feedback": "full", "horizon": 30}),
    ("AppleTasting-v0", {"world_seed": 4, "gain": 2.0, "cost_fp": 0.5, "horizon": 30}),
    ("AppleTasting-v0", {"scenario": "minority", "horizon": 30}),
    ("AppleTasting-v0", {"scenario": "gappy", "dim": 5, "noise": 0.05, "horizon": 30}),
    ("AppleTasting-v0", {"scenario": "striped", "order": "adversarial", "horizon": 30}),
    ("AppleTasting-v0", {"dataset": "breast_cancer"}),
    ("AppleTasting-v0", {"dataset": "breast_cancer", "order": "adversarial", "feedback": "full"}),
    ("AppleTasting-v0", {"dataset": "sms_spam", "data_home": DATA_HOME, "dim": 256}),
    (
        "AppleTasting-v0",
        {"dataset": "reuters_r8", "data_home": DATA_HOME, "topic": "ship", "dim": 128},
    ),
    ("RejectOption-v0", {"horizon": 30}),
    ("RejectOption-v0", {"scenario": "separable", "noise": 0.1, "dim": 3, "horizon": 30}),
    ("RejectOption-v0", {"d": 0.4, "query_cost": 0.05, "settle": "never", "horizon": 30}),
    ("RejectOption-v0", {"feedback": "full", "world_seed": 2, "separation": 4.0, "horizon": 30}),
    ("RejectOption-v0", {"dataset": "breast_cancer"}),
    # 5 rows drawn with replacement: the episode ends inside the rollouts; the lump
    # settled at the end reveals the hidden losses' sum by design, so this case
    # settles never (test_reject.py checks the settlement itself)
    (
        "RejectOption-v0",
        {"dataset": "breast_cancer", "replacement": True, "horizon": 5, "settle": "never"},
    ),
    ("RejectOption-v0", {"dataset": "phishing", "data_home": DATA_HOME, "d": 0.1}),
    ("RejectOption-v0", {"dataset": "guide", "data_home": DATA_HOME, "horizon": 40}),
    ("RejectOption-v0", {"dataset": "sms_spam", "data_home": DATA_HOME, "dim": 64}),
    ("MultiServiceChoice-v0", {"n_users": 40, "n_services": 5}),
    ("MultiServiceChoice-v0", {"n_users": 40, "loss": "mahalanobis", "dim": 3, "n_services": 8}),
    ("MultiServiceChoice-v0", {"n_users": 40, "loss": "huber", "dynamics_rounds": 3}),
    ("MultiServiceChoice-v0", {"n_users": 30, "loss": "cosine", "dim": 4, "n_groups": 3}),
    (
        "MultiServiceChoice-v0",
        {"population": "linear", "n_users": 30, "dim": 3, "samples_per_user": 10, "n_services": 6},
    ),
    (
        "MultiServiceChoice-v0",
        {"population": "census", "data_home": DATA_HOME, "dynamics_rounds": 2},
    ),
    ("DelayedImpactLending-v0", {"batch_size": 5, "horizon": 30}),
    ("DelayedImpactLending-v0", {"scenario": "bin_shift", "batch_size": 3, "horizon": 30}),
    ("DelayedImpactLending-v0", {"feedback": "full", "shift_mass": 0.2, "horizon": 30}),
    (
        "DelayedImpactLending-v0",
        {"dynamics": "bin_shift", "repay_score_change": 2, "default_score_change": -3},
    ),
    ("DelayedImpactLending-v0", {"dataset": "fico", "data_home": DATA_HOME, "batch_size": 4}),
    (
        "DelayedImpactLending-v0",
        {"dataset": "fico", "data_home": DATA_HOME, "groups": ["Hispanic", "Asian", "White"]},
    ),
    # retention: departed users return; replaced by newcomers of their group; census groups
    (
        "MultiServiceChoice-Retention-v0",
        {"n_users": 40, "n_services": 4, "return_probability": 0.3},
    ),
    (
        "MultiServiceChoice-Retention-v0",
        {"n_users": 40, "loss": "mahalanobis", "dim": 3, "replace": True, "tolerance": 0.5},
    ),
    (
        "MultiServiceChoice-Retention-v0",
        {"population": "linear", "n_users": 30, "dim": 3, "samples_per_user": 10, "replace": True},
    ),
    (
        "MultiServiceChoice-Retention-v0",
        {"population": "census", "data_home": DATA_HOME, "tolerance": 0.05, "report": "excess"},
    ),
]

CASES: list[tuple[str, dict[str, Any]]] = [(env_id, {}) for env_id in env_ids()] + VARIANTS
#: one case per registered id (its defaults), for tests too slow to run on every variant
DEFAULTS: list[tuple[str, dict[str, Any]]] = [(env_id, {}) for env_id in env_ids()]


def case_id(case: tuple[str, dict[str, Any]]) -> str:
    env_id, kwargs = case
    return env_id + "".join(
        f"-{key}={value}" for key, value in kwargs.items() if key != "data_home"
    )


def case_param(case: tuple[str, dict[str, Any]], *, slow: bool = False) -> Any:
    """Return ``case`` as a pytest parameter: slow if big or ``slow``, skipped without data."""
    kwargs = case[1]
    marks: list[Any] = []
    if slow or kwargs.get("dataset") in SLOW_DATASETS:
        marks.append(pytest.mark.slow)
    if "data_home" in kwargs:  # the real files: skipped where OSFB_DATA lacks them
        marks.append(needs_osfb_data(*dataset_folders(kwargs)))
    return pytest.param(case, id=case_id(case), marks=marks)


def dataset_folders(kwargs: dict[str, Any]) -> tuple[str, ...]:
    """The data folders an env case reads (the census population reads Adult)."""
    if kwargs.get("population") == "census":
        return ("adult",)
    folder = get_spec(kwargs["dataset"]).folder
    return (folder,) if folder is not None else ()
