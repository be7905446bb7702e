"""The benchmark: suites of envs x agents x seeds, tables and plots."""

from osfb_gym.bench.run import SuiteResult, run_suite
from osfb_gym.bench.suites import SUITES, Cell, Suite, get_suite

__all__ = ["SUITES", "Cell", "Suite", "SuiteResult", "get_suite", "run_suite"]
