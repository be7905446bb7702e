"""Gymnasium wrappers that adapt osfb-gym environments to generic RL algorithms.

- Observation views (:mod:`osfb_gym.wrappers.observations`):
  :class:`VectorObservation` (the env's observation as a ``float32``
  vector), :class:`FeedbackObservation` (plus the previous step's revealed
  feedback, for recurrent policies) and :class:`EstimatorFeatures` (the
  statistics a principled agent computes from the revealed outcomes).
- Action adapters (:mod:`osfb_gym.wrappers.actions`):
  :class:`DiscreteActions` and :class:`BinaryAsMultiDiscrete`.
- :func:`rl_env`: a registered id made ready for an RL library (the
  oracle hidden, a view, adapted actions); the RL-ready ids
  ``<Family>-RL-v0``, ``<Family>-RL-Features-v0`` and
  ``<Family>-RL-Feedback-v0`` are this function by name.
  :func:`apply_view` puts a view on an env whose oracle the evaluator reads.

Every wrapper keeps the honest-feedback contract: what it adds is computed
from the observation, the action, the reward and ``info["feedback"]`` only.
"""

from osfb_gym.wrappers.actions import MAX_DISCRETE_ACTIONS, BinaryAsMultiDiscrete, DiscreteActions
from osfb_gym.wrappers.observations import (
    EstimatorFeatures,
    FeedbackObservation,
    VectorObservation,
)
from osfb_gym.wrappers.rl import apply_view, needs_flattening, rl_env, rl_preset
from osfb_gym.wrappers.views import VIEWS, encode, encode_space

__all__ = [
    "MAX_DISCRETE_ACTIONS",
    "VIEWS",
    "BinaryAsMultiDiscrete",
    "DiscreteActions",
    "EstimatorFeatures",
    "FeedbackObservation",
    "VectorObservation",
    "apply_view",
    "encode",
    "encode_space",
    "needs_flattening",
    "rl_env",
    "rl_preset",
]
