"""``osfb_gym.bench.rl.train`` on the native vector envs: the same training as on DummyVecEnv.

``vec="native"`` (and ``"auto"``, the default, with ``n_envs > 1``) steps the
family's native vector env; ``"dummy"`` SB3's ``DummyVecEnv``. Under the same
seeds both hand the algorithm the same observations, rewards and dones, so
the two models' parameters agree (within 1e-6: two code paths feed the
network) and the training episodes' metrics (``on_episode``) are the same
episodes in the same order (within 1e-12 relative).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

import osfb_gym  # noqa: E402, F401  (registers the ids)
from osfb_gym.bench.rl import save, train  # noqa: E402
from tests.osfb_gym.wrappers.test_native_episodes import assert_same_episodes  # noqa: E402

PPO_SMALL = {"n_steps": 25, "batch_size": 50, "n_epochs": 2}


def trained(env_id: str, vec: str, **kwargs: Any) -> tuple[Any, list[dict[str, float]]]:
    episodes: list[dict[str, float]] = []
    options: dict[str, Any] = {
        "total_timesteps": 300,
        "env_kwargs": {"horizon": 15},
        "n_envs": 4,
        "seed": 3,
        "algo_kwargs": PPO_SMALL,
    }
    model = train(env_id, vec=vec, on_episode=episodes.append, **(options | kwargs))
    return model, episodes


def parameters(model: Any) -> np.ndarray:
    return np.concatenate([p.detach().numpy().ravel() for p in model.policy.parameters()])


def vector_env_names(model: Any) -> list[str]:
    env, names = model.get_env(), []
    while env is not None:
        names.append(type(env).__name__)
        env = getattr(env, "venv", None)
    return names


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("OneSidedLending-v0", {}),
        ("AppleTasting-v0", {"view": "features", "normalize": True}),
        ("OneSidedLending-v0", {"algo": "DQN", "algo_kwargs": {"learning_starts": 50}}),
        ("RejectOption-v0", {"algo": "A2C", "algo_kwargs": {"n_steps": 5}}),
        (
            "AppleTasting-v0",
            {
                "algo": "RecurrentPPO",
                "view": "feedback",
                "algo_kwargs": PPO_SMALL | {"n_epochs": 1},
            },
        ),
    ],
)
def test_native_training_equals_dummy_training(env_id, kwargs):
    native, native_episodes = trained(env_id, "native", **kwargs)
    dummy, dummy_episodes = trained(env_id, "dummy", **kwargs)
    assert "SB3VecEnv" in vector_env_names(native)
    assert "DummyVecEnv" in vector_env_names(dummy)
    np.testing.assert_allclose(parameters(native), parameters(dummy), rtol=0, atol=1e-6)
    # 300 steps in 4 envs of 15 steps: 20 episodes (PPO's rollouts of 100: exactly 300)
    assert len(native_episodes) == 20
    assert_same_episodes(native_episodes, dummy_episodes)
    # SB3's episode statistics (ep_rew_mean) come from VecMonitor as from Monitor: lengths
    # equal, returns summed in float32 (VecMonitor) against float64 rounded to 6 decimals
    ours = np.array([(info["r"], info["l"]) for info in native.ep_info_buffer])
    theirs = np.array([(info["r"], info["l"]) for info in dummy.ep_info_buffer])
    assert len(ours) == 20
    np.testing.assert_array_equal(ours[:, 1], theirs[:, 1])
    np.testing.assert_allclose(ours[:, 0], theirs[:, 0], rtol=0, atol=1e-4)


def test_auto_picks_the_native_env_where_it_covers_the_arguments():
    assert "SB3VecEnv" in vector_env_names(trained("AppleTasting-v0", "auto")[0])
    # one env: SB3's own DummyVecEnv (nothing to batch)
    one = trained("AppleTasting-v0", "auto", n_envs=1, algo_kwargs=PPO_SMALL | {"batch_size": 25})
    assert "DummyVecEnv" in vector_env_names(one[0])
    # a dataset is the single env's: the fallback, with the episodes still recorded
    model, episodes = trained(
        "OneSidedLending-v0", "auto", env_kwargs={"scenario": "greedy_trap", "horizon": 15}
    )
    assert "DummyVecEnv" in vector_env_names(model) and len(episodes) == 20


def test_bad_vector_env_choices_name_the_parameter():
    with pytest.raises(ValueError, match="vec"):
        trained("AppleTasting-v0", "sync")
    with pytest.raises(ValueError, match="native=True"):
        trained("AppleTasting-v0", "native", env_kwargs={"horizon": 15, "order": "adversarial"})
    with pytest.raises(ValueError, match="on_episode.*subproc"):
        trained("AppleTasting-v0", "subproc")


def test_a_model_trained_natively_saves_and_loads_with_its_statistics(tmp_path):
    from agents.rl import SB3Agent
    from osfb_gym.runner import evaluate

    model, _ = trained("AppleTasting-v0", "native", normalize=True)
    path = save(model, tmp_path, "AppleTasting-v0", 3)
    loaded = SB3Agent.load(path)
    seeds = range(5)
    before = evaluate("AppleTasting-v0", SB3Agent(model), seeds, env_kwargs={"horizon": 15})
    after = evaluate("AppleTasting-v0", loaded, seeds, env_kwargs={"horizon": 15})
    assert before["cumulative_loss"].tolist() == after["cumulative_loss"].tolist()
    import gymnasium as gym

    env = gym.make("AppleTasting-v0", horizon=15)
    loaded.reset(env.observation_space, env.action_space, seed=0)
    normalizer = model.get_vec_normalize_env()
    assert normalizer.obs_rms.count > 1
    np.testing.assert_allclose(loaded.obs_stats_[0], normalizer.obs_rms.mean)


def _rl_ids() -> list[str]:
    from envs_registry import rl_env_ids

    return rl_env_ids()


@pytest.mark.parametrize("env_id", _rl_ids())
@pytest.mark.parametrize("vec", ["dummy", "native"])
def test_an_rl_id_trains_on_its_own_view_and_actions(env_id, vec):
    # train passed view="plain" and discrete_actions=False over an RL id's preset: PPO on
    # a -Feedback id saw the plain view, on a -Discrete twin the MultiDiscrete actions
    import gymnasium as gym

    from osfb_gym.wrappers import rl_preset

    kwargs = {} if "MultiServiceChoice" in env_id else {"horizon": 4}
    if vec == "native" and gym.spec(env_id).vector_entry_point is None:
        pytest.skip(f"{env_id} has no native vector env")
    model = train(
        env_id, "A2C", total_timesteps=4, env_kwargs=kwargs, n_envs=2, vec=vec,
        algo_kwargs={"n_steps": 2},
    )  # fmt: skip
    env = gym.make(env_id, **kwargs)
    assert model.observation_space.shape == env.observation_space.shape
    assert model.action_space == env.action_space
    with pytest.raises(ValueError, match=r"contradicts env_id .* drop view, or train on the base"):
        other = "plain" if rl_preset(env_id)[1]["view"] != "plain" else "feedback"
        train(env_id, "A2C", total_timesteps=4, env_kwargs=kwargs, view=other)


def test_an_rl_ids_preset_is_not_overridden_by_a_keyword():
    from osfb_gym.wrappers.sb3 import make_sb3_vec_env

    with pytest.raises(ValueError, match=r"is view='feedback' already, which view='plain'"):
        make_sb3_vec_env("AppleTasting-RL-Feedback-v0", 2, view="plain", horizon=4)
    venv = make_sb3_vec_env("AppleTasting-RL-Feedback-v0", 2, view="feedback", horizon=4)
    assert venv.num_envs == 2


@pytest.mark.parametrize("env_id", ["DelayedImpactLending-v0", "DelayedImpactLending-RL-v0"])
def test_an_argument_the_env_lacks_is_named_with_the_ones_it_takes(env_id):
    # Gymnasium's creator message named neither train's parameter nor the env's arguments
    # (the delayed-impact worlds are read from data, so they have no world_seed)
    with pytest.raises(TypeError, match=r"^env_kwargs: DelayedImpactLending-v0 takes no argument "
                       r"'world_seed'; its arguments: .*horizon"):  # fmt: skip
        train(env_id, "A2C", total_timesteps=4, env_kwargs={"world_seed": 0})
