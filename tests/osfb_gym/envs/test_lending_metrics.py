"""LendingMetrics of a single episode: the held blocks against the step-by-step sums."""

from __future__ import annotations

import numpy as np
import pytest

from osfb_gym.core.metrics import EpisodeMetrics
from osfb_gym.envs.lending import metrics as module


class _StepByStep(module.LendingMetrics):
    """The single-episode update as the earlier code made it: a dozen calls per step."""

    def update(self, action, reward, feedback, oracle):
        EpisodeMetrics.update(self, action, reward, feedback, oracle)
        action, bayes, valid = np.asarray(action), oracle["bayes_action"], feedback.get("valid")
        if valid is None or np.all(valid):
            self.decisions += action.size
            self.approvals += self._count(action == 1)
            self.wrongly_approved += self._count((action == 1) & (bayes == 0))
            self.wrongly_denied += self._count((action == 0) & (bayes == 1))
            return
        valid = np.asarray(valid, dtype=bool)
        self.decisions += int(np.count_nonzero(valid))
        self.approvals += self._count((action == 1) & valid)
        self.wrongly_approved += self._count((action == 1) & (bayes == 0) & valid)
        self.wrongly_denied += self._count((action == 0) & (bayes == 1) & valid)


def _same(a, b):
    """The same keys, the same Python types and the same bits."""
    assert set(a) == set(b)
    for key in a:
        assert type(a[key]) is type(b[key]), key
        assert np.asarray(a[key]).tobytes() == np.asarray(b[key]).tobytes(), key


@pytest.mark.parametrize("held", [3, 1 << 16])
@pytest.mark.parametrize("batch", [1, 3])
def test_single_episode_metrics_sum_as_step_by_step(batch, held, monkeypatch):
    """The held blocks give a single episode's step-by-step sums, bit for bit, as Python numbers.

    Bit for bit on any CPU: ``np.add.accumulate`` adds strictly in the steps'
    order, the very additions of the step-by-step reference, each exactly
    rounded by IEEE. Rewards of mixed magnitudes (the order shows in the last
    bits), padded rows, steps without ``valid``, float and list actions,
    ``get`` mid-episode, and blocks of 3 entries (a block closes every step or three).
    """
    monkeypatch.setattr(module, "HELD_ENTRIES", held)
    rng = np.random.default_rng(5)
    held_metrics, reference = module.LendingMetrics(), _StepByStep()
    for step in range(150):
        action = rng.integers(0, 2, batch).astype(np.int8)
        if step % 7 == 3:
            action = action.astype(np.float32)
        elif step % 11 == 5:
            action = action.tolist()
        feedback = {"revealed": np.asarray(action) == 1}
        if step % 5 != 4:
            valid = np.ones(batch, dtype=bool)
            if step % 9 == 8:
                valid[batch - 1] = False
            feedback["valid"] = valid
        oracle = {
            "bayes_action": rng.integers(0, 2, batch).astype(np.int8),
            "loss": float(rng.random() * 10.0 ** rng.integers(-8, 8)),
        }
        reward = float(rng.standard_normal() * 10.0 ** rng.integers(-8, 8))
        held_metrics.update(action, reward, feedback, oracle)
        reference.update(action, reward, feedback, oracle)
        if step in (0, 60, 61):
            _same(held_metrics.get(), reference.get())
    _same(held_metrics.get(), reference.get())
    assert held_metrics.get()["steps"] == 150.0


def test_single_episode_metrics_keep_no_reference_to_the_steps_arrays():
    """A caller may reuse its arrays after update: the metrics copied what they count."""
    metrics = module.LendingMetrics()
    action, revealed = np.ones(2, dtype=np.int8), np.ones(2, dtype=bool)
    bayes = np.zeros(2, dtype=np.int8)
    metrics.update(action, 1.0, {"revealed": revealed}, {"bayes_action": bayes, "loss": 0.5})
    action[:], revealed[:], bayes[:] = 0, False, 1
    summary = metrics.get()
    assert summary["approval_rate"] == 1.0 and summary["wrongly_approved"] == 2.0
    assert summary["n_revealed"] == 2.0 and summary["wrongly_denied"] == 0.0
