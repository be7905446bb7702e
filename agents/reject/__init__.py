"""Online active learning of reject-option classifiers (Shah and Manwani, 2020).

:class:`DRAL` (double ramp loss, Algorithm 1), :class:`DSAL` (double
sigmoid loss with a query probability, Algorithm 2) and :class:`DSOL` (the
double sigmoid learner that asks for every label, the paper's baseline),
each linear or, with ``kernel=``, a kernel expansion. They run on
``RejectOption-v0``.
"""

from agents.reject.base import KernelScore, LinearScore, RejectLearner
from agents.reject.learners import DRAL, DSAL, DSOL

__all__ = ["DRAL", "DSAL", "DSOL", "KernelScore", "LinearScore", "RejectLearner"]
