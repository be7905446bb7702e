"""The no-leak probe: set what an action leaves hidden to an extreme, for any family.

The no-leak tests run an episode twice with the hidden outcomes pushed to
``"low"`` and then ``"high"`` before every step, and require everything the
agent sees to be identical. Each family names its probe in its ``Family``
record (:attr:`osfb_gym.core.family.Family.probe`, a function in its own
package): it reaches the env's hidden state through the private attributes
the env's class documents as its *probe seam* (section "Hidden State" of
its docstring), which hold the current step's hidden truth. So a new family
is probed as soon as its record names its probe; nothing here changes.
"""

from __future__ import annotations

from typing import Any

from osfb_gym.core.family import FAMILIES, load
from osfb_gym.wrappers.views import family_of


def override_hidden(env: Any, action: Any, extreme: str) -> bool:
    """Set every outcome ``action`` would leave hidden to ``extreme`` (``"low"``/``"high"``).

    Returns whether any outcome was hidden (and so changed). ``env`` may be
    wrapped; its family (the registry's) names the probe.
    """
    if extreme not in ("low", "high"):
        raise ValueError(f"extreme must be 'low' or 'high', got {extreme!r}")
    raw = getattr(env, "unwrapped", env)
    family = FAMILIES[family_of(raw)]
    if family.probe is None:
        raise LookupError(
            f"family {family.name!r} names no no-leak probe: set probe='module:function' in "
            "its Family record (docs/adding-a-family.md)"
        )
    return bool(load(family.probe)(raw, action, extreme))
