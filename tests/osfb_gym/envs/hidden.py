"""The no-leak probe: set what an action leaves hidden to an extreme, family by family.

The no-leak tests run an episode twice with the hidden outcomes pushed to
``"low"`` and then ``"high"`` before every step, and require everything the
agent sees to be identical. The probe is test code: it reaches each env's
hidden state through the private attributes the env's class documents as
its *probe seam* (section "Hidden State" of its docstring), which hold the
current step's hidden truth:

| family         | seam                          | what the probe sets                        |
|----------------|-------------------------------|--------------------------------------------|
| lending        | ``_y`` (batch outcomes)       | unapproved outcomes to 0/1 (logistic) or -+1e3 |
| apple          | ``_y`` (the label)            | an untasted label to 0 or 1                |
| reject         | ``_y`` (the label, -1/+1)     | an unqueried label to -1 or +1             |
| services       | ``_world``, ``_services``, ``_pool`` | a reflection of every preference |
| delayed_impact | ``_y`` (repaid or not)        | denied applicants' outcomes to 0 or 1      |

A new family adds its probe to :data:`PROBES`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from osfb_gym.wrappers.views import family_of


def _lending(env: Any, action: Any, extreme: str) -> bool:
    hidden = np.asarray(action) == 0
    if env.feedback_mode == "full" or not hidden.any():
        return False
    if env.link.name == "logistic":
        value = 0.0 if extreme == "low" else 1.0
    else:
        value = -1e3 if extreme == "low" else 1e3
    env._y = np.where(hidden, value, env._y)
    return True


def _apple(env: Any, action: Any, extreme: str) -> bool:
    if env.feedback_mode == "full" or int(np.asarray(action)) != 0 or env._y is None:
        return False
    env._y = 0 if extreme == "low" else 1
    return True


def _reject(env: Any, action: Any, extreme: str) -> bool:
    if env.feedback_mode == "full" or env._y is None:
        return False
    if int(np.asarray(action)[1]) == 1:
        return False
    env._y = -1 if extreme == "low" else 1
    return True


def _services(env: Any, action: Any, extreme: str) -> bool:
    """Reflect the hidden world: every loss at every service stays, preferences move.

    ``"high"`` negates every coordinate, ``"low"`` the first one only
    (nothing when ``d = 1``). Applied to preferences, loss matrices and the
    services placed so far alike (and to the retention world's newcomers),
    such a reflection keeps every loss exactly, bit for bit (IEEE arithmetic
    is symmetric under sign changes), so any difference in what the agent
    sees would be a leak.
    """
    if env._world is None:
        return False
    reflection = np.ones(env.service_dim)
    if extreme == "high":
        reflection[:] = -1.0
    elif env.service_dim > 1:
        reflection[0] = -1.0
    rotation = np.diag(reflection)
    env._world = env._world.rotated(rotation)
    env._services = env._services * reflection
    if getattr(env, "_pool", None) is not None:  # the retention world's newcomers
        env._pool = env._pool.rotated(rotation)
    return True


def _delayed_impact(env: Any, action: Any, extreme: str) -> bool:
    hidden = np.asarray(action).reshape(-1) == 0
    if env.feedback_mode == "full" or not hidden.any():
        return False
    env._y = np.where(hidden, 0.0 if extreme == "low" else 1.0, env._y)
    return True


#: family name -> its probe ``(env, action, extreme) -> whether anything was hidden``
PROBES: dict[str, Callable[[Any, Any, str], bool]] = {
    "lending": _lending,
    "apple": _apple,
    "reject": _reject,
    "services": _services,
    "delayed_impact": _delayed_impact,
}


def override_hidden(env: Any, action: Any, extreme: str) -> bool:
    """Set every outcome ``action`` would leave hidden to ``extreme`` (``"low"``/``"high"``).

    Returns whether any outcome was hidden (and so changed). ``env`` may be
    wrapped; its family (the registry's) picks the probe.
    """
    if extreme not in ("low", "high"):
        raise ValueError(f"extreme must be 'low' or 'high', got {extreme!r}")
    raw = getattr(env, "unwrapped", env)
    return PROBES[family_of(raw)](raw, action, extreme)
