"""RejectOption-v0 (Shah and Manwani 2020), one module per concern.

- :mod:`~osfb_gym.envs.reject.config`: the two configs (synthetic, dataset) and their checks;
- :mod:`~osfb_gym.envs.reject.data`
- :mod:`~osfb_gym.envs.reject.family`: ``FAMILY``, its family record;
- :mod:`~osfb_gym.envs.reject.env`
- :mod:`~osfb_gym.envs.reject.metrics`
- :mod:`~osfb_gym.envs.reject.world`

Every public name is importable from ``osfb_gym.envs.reject`` as before.
"""

from osfb_gym.envs.reject.config import DatasetReject, RejectConfig, SyntheticReject
from osfb_gym.envs.reject.data import (
    DEFAULT_HORIZON,
)
from osfb_gym.envs.reject.env import (
    RejectOptionEnv,
)
from osfb_gym.envs.reject.family import FAMILY
from osfb_gym.envs.reject.metrics import (
    DECISION_LABEL,
    PREDICT_NEGATIVE,
    PREDICT_POSITIVE,
    REJECT,
    RejectMetrics,
    check_action,
    decision_loss,
)
from osfb_gym.envs.reject.world import (
    CHUNK,
    DEFAULT_DIM,
    DEFAULT_SEPARATION,
    FEATURE_BOUND,
    MAX_SEPARATION,
    SCENARIOS,
    SyntheticWorld,
    chow_risk,
    draw_world,
)

__all__ = [
    "DatasetReject",
    "RejectConfig",
    "SyntheticReject",
    "FAMILY",
    "CHUNK",
    "DECISION_LABEL",
    "DEFAULT_DIM",
    "DEFAULT_HORIZON",
    "DEFAULT_SEPARATION",
    "FEATURE_BOUND",
    "MAX_SEPARATION",
    "PREDICT_NEGATIVE",
    "PREDICT_POSITIVE",
    "REJECT",
    "RejectMetrics",
    "RejectOptionEnv",
    "SCENARIOS",
    "SyntheticWorld",
    "check_action",
    "chow_risk",
    "decision_loss",
    "draw_world",
]
