"""MultiServiceChoice-v0 (Bose et al., AcQUIre), one module per concern.

- :mod:`~osfb_gym.envs.services.family`: ``FAMILY``, its family record;
- :mod:`~osfb_gym.envs.services.config`: the two configs (synthetic, data) and their checks;
- :mod:`~osfb_gym.envs.services.env`
- :mod:`~osfb_gym.envs.services.metrics`
- :mod:`~osfb_gym.envs.services.populations`
- :mod:`~osfb_gym.envs.services.reference`
- :mod:`~osfb_gym.envs.services.render`
- :mod:`~osfb_gym.envs.services.retention`
- :mod:`~osfb_gym.envs.services.world`

Every public name is importable from ``osfb_gym.envs.services`` as before.
"""

from osfb_gym.envs.services.config import (
    DataServices,
    RetentionConfig,
    ServicesConfig,
    SyntheticServices,
)
from osfb_gym.envs.services.env import (
    MultiServiceChoiceEnv,
    ServiceMetrics,
)
from osfb_gym.envs.services.family import FAMILY
from osfb_gym.envs.services.retention import MultiServiceChoiceRetentionEnv, RetentionMetrics

__all__ = [
    "DataServices",
    "RetentionConfig",
    "ServicesConfig",
    "SyntheticServices",
    "FAMILY",
    "MultiServiceChoiceEnv",
    "MultiServiceChoiceRetentionEnv",
    "RetentionMetrics",
    "ServiceMetrics",
]
