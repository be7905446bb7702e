"""The built-in suites: one module per paper reproduction, the RL comparison and ``quick``.

Each module holds a suite's spec (the sweep stages: envs x agents x grids x
seeds) and its report (stored rows -> the paper's tables, figures and
prose); the engine (:mod:`osfb_gym.bench.run`, :mod:`~osfb_gym.bench.executors`,
:mod:`~osfb_gym.bench.store`) runs them all the same way.
:mod:`osfb_gym.bench.catalog` names them for ``osfb-bench``.
"""
