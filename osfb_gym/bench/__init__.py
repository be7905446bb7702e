"""The benchmark: sweeps of envs x agents x grids x seeds, a result store, executors, tables."""

from osfb_gym.bench.run import SuiteResult, run_suite, run_sweep
from osfb_gym.bench.store import ResultStore
from osfb_gym.bench.suites import ALIASES, SUITES, get_suite
from osfb_gym.bench.sweep import AgentSpec, Cell, EnvSpec, SweepSpec, load_spec

__all__ = [
    "ALIASES",
    "SUITES",
    "AgentSpec",
    "Cell",
    "EnvSpec",
    "ResultStore",
    "SuiteResult",
    "SweepSpec",
    "get_suite",
    "load_spec",
    "run_suite",
    "run_sweep",
]
