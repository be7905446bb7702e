"""The lending family's speed-only path: the lockstep vector env's one-stream step.

:class:`~osfb_gym.envs.lending.vector.OneSidedLendingVectorEnv.step` scores the
general way (every stream's arrays stacked, the general validator and scoring
functions) and hands the replicas of a paper's grid (one stream, full
batches) to :func:`step_one_stream`, which performs the same IEEE operations
on the same values for every sub-env at once. The tests compare lockstep
replicas with single envs bit for bit (``tests/osfb_gym/envs/test_lending_vector.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from osfb_gym.core.channels import FEEDBACK, ORACLE
from osfb_gym.envs.lending.metrics import revealed_reward


def step_one_stream(
    envs: Any, actions: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    """``envs.step(actions)`` when every sub-env reads one stream and its batch is all real rows.

    ``envs`` is a :class:`~osfb_gym.envs.lending.vector.OneSidedLendingVectorEnv`
    whose ``step`` checked ``actions`` and decided to come here.

    The replicas of a paper's grid: the stream's batch is scored for every
    sub-env at once, with the same IEEE operations on the same values as the
    general path (a batch of one: the loss ``|mu - c|`` or 0.0 and the
    reward ``y - c`` or 0.0 directly, the one term of their sums). The
    arrays handed out are fresh each step (the all-true ``valid`` and one
    applicant's Bayes actions copied from constants).
    """
    stream = envs._streams[0]
    count, cutoff = envs.num_envs, envs.cutoff
    mu_row, y_row = stream._mu, stream._y
    mu = mu_row[None].repeat(count, axis=0)
    y = y_row[None].repeat(count, axis=0)
    approved = actions == 1
    if envs.batch_size == 1:
        one_mu, one_y = float(mu_row[0]), float(y_row[0])
        above = one_mu > cutoff
        shown = approved[:, 0]
        loss = np.where(shown != above, abs(one_mu - cutoff), 0.0)
        reward = np.where(shown, one_y - cutoff, 0.0)
        bayes = envs._constants[1 if above else 0].copy()
    else:
        rows_above = mu_row > cutoff
        loss = np.sum(np.abs(mu - cutoff) * (rows_above != actions), axis=-1)
        reward = revealed_reward(y, cutoff, approved)
        bayes = rows_above.view(np.int8)[None].repeat(count, axis=0)
    valid = envs._constants[2].copy()
    revealed = approved if envs.feedback_mode == "one_sided" else valid.copy()
    info = {
        FEEDBACK: {"revealed": revealed, "y": np.where(revealed, y, 0.0), "valid": valid},
        ORACLE: {"mu": mu, "y": y, "bayes_action": bayes, "loss": loss},
    }
    observation, ended, cut = stream._advance()
    obs = observation[None].repeat(count, axis=0)
    # np.zeros is np.full(count, False) without its Python wrapper
    terminated = np.ones(count, dtype=bool) if ended else np.zeros(count, dtype=bool)
    truncated = np.ones(count, dtype=bool) if cut else np.zeros(count, dtype=bool)
    if ended or cut:
        envs._running = False
    return obs, reward, terminated, truncated, info
