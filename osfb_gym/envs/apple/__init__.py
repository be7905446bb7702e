"""AppleTasting-v0 (Helmbold et al. 2000; Sculley 2007), one module per concern.

- :mod:`~osfb_gym.envs.apple.world`: synthetic worlds (``w*``, the gappy and
  striped geometry of Sculley's Figure 8);
- :mod:`~osfb_gym.envs.apple.streams`: dataset streams (orders, train/test
  parts, relabelling, features);
- :mod:`~osfb_gym.envs.apple.metrics`: a step's reward and loss, the episode
  metrics;
- :mod:`~osfb_gym.envs.apple.render`: what a render shows;
- :mod:`~osfb_gym.envs.apple.family`: ``FAMILY``, its family record;
- :mod:`~osfb_gym.envs.apple.config`: the two configs (synthetic, dataset) and their checks;
- :mod:`~osfb_gym.envs.apple.env`: :class:`AppleTastingEnv` itself.

Every public name is importable from ``osfb_gym.envs.apple`` as before.
"""

from osfb_gym.envs.apple.config import (
    DEFAULT_DIM,
    DEFAULT_HORIZON,
    FEEDBACK_MODES,
    ORDERS,
    AppleConfig,
    DatasetApple,
    SyntheticApple,
)
from osfb_gym.envs.apple.env import AppleTastingEnv
from osfb_gym.envs.apple.family import FAMILY
from osfb_gym.envs.apple.metrics import (
    FALSE_NEGATIVE,
    FALSE_POSITIVE,
    NO_MISTAKE,
    AppleMetrics,
    check_action,
    outcome,
)
from osfb_gym.envs.apple.render import DECISION_LEGEND, HIDDEN, LABEL_LEGEND
from osfb_gym.envs.apple.streams import (
    DEFAULT_TEXT_FEATURES,
    ROWS,
    TABULAR_FEATURES,
    adversarial_order,
    derive_stream,
    move_first_positive_first,
    split_rows,
    unit_rows,
)
from osfb_gym.envs.apple.world import (
    CHUNK,
    DEFAULT_GAP,
    DEFAULT_POSITIVE_RATE,
    DEFAULT_STRIPE,
    FEATURE_BOUND,
    MAX_BAND,
    SCENARIOS,
    SyntheticWorld,
    draw_world,
)

__all__ = [
    "DatasetApple",
    "SyntheticApple",
    "FAMILY",
    "CHUNK",
    "DECISION_LEGEND",
    "DEFAULT_DIM",
    "DEFAULT_GAP",
    "DEFAULT_HORIZON",
    "DEFAULT_POSITIVE_RATE",
    "DEFAULT_STRIPE",
    "DEFAULT_TEXT_FEATURES",
    "FALSE_NEGATIVE",
    "FALSE_POSITIVE",
    "FEATURE_BOUND",
    "FEEDBACK_MODES",
    "HIDDEN",
    "LABEL_LEGEND",
    "MAX_BAND",
    "NO_MISTAKE",
    "ORDERS",
    "ROWS",
    "SCENARIOS",
    "TABULAR_FEATURES",
    "AppleConfig",
    "AppleMetrics",
    "AppleTastingEnv",
    "SyntheticWorld",
    "adversarial_order",
    "check_action",
    "derive_stream",
    "draw_world",
    "move_first_positive_first",
    "outcome",
    "split_rows",
    "unit_rows",
]
