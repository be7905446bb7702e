"""The lending agents' speed-only paths, behind one seam.

Nothing here decides anything the readable agents (:mod:`agents.lending`) do
not decide themselves: each path computes what a readable one computes, for
speed, and is tested equal to it.

- :mod:`~agents.lending._fast.replicas`: :class:`CutoffReplicas`, many cutoff
  agents in lockstep on the sub-envs of a lending vector env (a paper's grid as
  one vector episode); an agent says whether it runs there by its class's
  :meth:`~agents.lending.base.CutoffAgent.replica_spec`.
- :mod:`~agents.lending._fast.one_row`: a cutoff agent's decision and update
  for one applicant on Python floats (what ``CutoffAgent.act``/``update`` take
  for a batch of one), read from the agent's own rule.
- :mod:`~agents.lending._fast.shared_rls`: one recursive least squares state per
  distinct revealed history, for the replicas' linear, incremental agents.
- :mod:`~agents.lending._fast.row_log`: the stream's rows, stored once for all
  replicas, and an estimator that keeps indices into them.
- :mod:`~agents.lending._fast.rank_one`: BLAS ``dger`` and the one-row update
  of many states from a loop compiled by numba (the optional ``fast`` extra).
- :mod:`~agents.lending._fast.blas_row`: one agent's per-step products and
  incremental logistic update as compiled calls around the same BLAS functions
  (numba, cached on disk), which ``one_row`` takes when numba is installed.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CutoffReplicas", "shares_state"]


def __getattr__(name: str) -> Any:
    # lazily: agents.lending.base imports this package's one_row, and the replicas
    # import the agents
    if name in __all__:
        from agents.lending._fast import replicas

        return getattr(replicas, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
