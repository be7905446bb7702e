"""CutoffReplicas: agents run as replicas decide and score as they do alone.

Replicas, shared states and compiled updates are other implementations of each
agent's learner: their episodes agree within ``tests.helpers.EPISODE_RTOL`` with
equal decisions (``assert_episodes_agree`` says why), not bit for bit, since a
BLAS or compiler rounds otherwise on another CPU. The same path run twice stays
bit for bit.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import pytest

import osfb_gym  # noqa: F401  (registers the ids)
from agents.apple import Perceptron
from agents.lending import (
    SGD,
    Adaptive,
    EpsilonGreedy,
    Greedy,
    LinUCB,
    Margin,
    Noise,
    OneSidedEpsilonGreedy,
    OneSidedNoise,
    Passive,
    ThompsonSampling,
)
from agents.lending._fast.replicas import CutoffReplicas
from osfb_gym.runner import run_episode, run_vector_episode
from tests.helpers import EPISODE_RTOL, assert_close, assert_episodes_agree, eps_of_largest

pytestmark = pytest.mark.crossimpl  # .ci/run runs these again under another SIMD dispatch

ID = "OneSidedLending-v0"

AGENTS = [
    Greedy(),
    Greedy(l2=4.0),
    EpsilonGreedy(alpha=0.5),
    EpsilonGreedy(alpha=2.0),
    OneSidedEpsilonGreedy(alpha=0.25),
    Noise(alpha=1.0),
    OneSidedNoise(alpha=0.5),
    Margin(alpha=0.125),
    Adaptive(rho=0.25),
    Adaptive(rho="theory", horizon=300),
    Adaptive(rho=0.5, project=True, beta_bound=1.0),
    Adaptive(rho=0.125, l2=1e-6, rho_schedule="sqrt_log_t", per_applicant_A=True),
    LinUCB(alpha=0.1),
    ThompsonSampling(nu=0.5),
    Passive(),
    SGD(),
]

SETTINGS = [
    pytest.param(dict(link="linear", horizon=300), id="linear"),
    pytest.param(dict(link="logistic", horizon=150, batch_size=4), id="logistic-batch"),
    pytest.param(dict(scenario="greedy_trap", link="linear", horizon=300), id="trap"),
    pytest.param(dict(dataset="breast_cancer", link="linear"), id="dataset"),
]


@pytest.mark.parametrize("kwargs", SETTINGS)
def test_replicas_decide_and_score_as_each_agent_alone(kwargs):
    envs = gym.make_vec(ID, num_envs=len(AGENTS), lockstep=True, **kwargs)
    replicas = CutoffReplicas([agent.clone() for agent in AGENTS])
    together = run_vector_episode(envs, replicas, seed=4)
    env = gym.make(ID, **kwargs)
    for agent, trajectory in zip(AGENTS, together, strict=True):
        alone = run_episode(env, agent.clone(), seed=4)
        assert_episodes_agree(trajectory, alone, path=repr(agent))


def test_replicas_on_different_seeds_are_the_agents_on_their_own_episodes():
    agents = [Greedy(), Noise(alpha=1.0), Adaptive(rho=0.5)]
    envs = gym.make_vec(ID, num_envs=3, horizon=100, link="linear", lockstep=True)
    together = run_vector_episode(envs, CutoffReplicas(agents), seed=[1, 2, 3])
    env = gym.make(ID, horizon=100, link="linear")
    for agent, trajectory, seed in zip(agents, together, [1, 2, 3], strict=True):
        assert_episodes_agree(trajectory, run_episode(env, agent.clone(), seed=seed))


def test_the_adaptive_bonus_learns_what_greedy_misses_as_a_replica_too():
    """The trap of Theorem 1: Greedy stays wrong about the trapped type, Adaptive does not."""
    envs = gym.make_vec(ID, num_envs=2, scenario="greedy_trap", horizon=1000, lockstep=True)
    greedy, adaptive = run_vector_episode(
        envs, CutoffReplicas([Greedy(), Adaptive(rho=0.5)]), seed=0
    )
    assert adaptive.metrics["wrongly_denied"] < 0.2 * greedy.metrics["wrongly_denied"]


def test_bad_agents_and_seeds_are_named():
    with pytest.raises(ValueError, match="agents"):
        CutoffReplicas([])
    with pytest.raises(TypeError, match=r"agents\[1\].*Perceptron"):
        CutoffReplicas([Greedy(), Perceptron()])
    envs = gym.make_vec(ID, num_envs=2, horizon=5, lockstep=True)
    with pytest.raises(ValueError, match="seed"):
        run_vector_episode(envs, CutoffReplicas([Greedy(), Greedy()]), seed=[1, 2, 3])


# a grid like a paper's: many agents whose histories coincide (greedy-like agents
# at tiny alphas reveal exactly what greedy reveals), so states are shared
GRID = [
    Greedy(),
    Greedy(),
    Greedy(l2=2.0),
    *(Margin(alpha=2.0**k) for k in (-10, -6, -2, 0)),
    *(OneSidedEpsilonGreedy(alpha=2.0**k) for k in (-10, -1)),
    *(Noise(alpha=2.0**k) for k in (-10, 1)),
    *(Adaptive(rho=2.0**k) for k in (-10, -10, -2)),
    # the jiang suites' paper fit: l2 = 1e-6, Algorithm 2's rho schedule and in-batch A
    Greedy(l2=1e-6),
    Margin(alpha=2.0**-10, l2=1e-6),
    *(
        Adaptive(rho=2.0**k, l2=1e-6, rho_schedule="sqrt_log_t", per_applicant_A=True)
        for k in (-10, -3)
    ),
    Adaptive(rho=0.25, rho_schedule="sqrt_log_t"),
    EpsilonGreedy(alpha=0.5),
    Greedy(solver="exact"),
    LinUCB(alpha=0.1),
]

SHARED_SETTINGS = [
    pytest.param(dict(link="linear", horizon=300), id="linear"),
    pytest.param(dict(link="linear", horizon=120, batch_size=3), id="rows-batch"),
    pytest.param(dict(link="linear", horizon=60, batch_size=8), id="block-batch"),
    pytest.param(dict(dataset="breast_cancer", link="linear", horizon=200), id="dataset"),
]


@pytest.mark.parametrize("kwargs", SHARED_SETTINGS)
def test_shared_states_decide_as_agents_learning_alone(kwargs):
    envs = gym.make_vec(ID, num_envs=len(GRID), lockstep=True, **kwargs)
    shared = CutoffReplicas([agent.clone() for agent in GRID])
    together = run_vector_episode(envs, shared, seed=2)
    reference = CutoffReplicas([agent.clone() for agent in GRID], share=False)
    apart = run_vector_episode(envs, reference, seed=2)
    for agent, a, b in zip(GRID, together, apart, strict=True):
        assert_episodes_agree(a, b, path=repr(agent))
    state = shared.shared_
    assert state is not None and reference.shared_ is None
    # the exact solver and LinUCB learn on their own; everyone else shares
    assert len(shared.shared_agents_) == len(GRID) - 2
    assert len(np.unique(state.slot[: state.n_agents])) < state.n_agents
    # the same estimate as the agent's own estimator
    for index in shared.shared_agents_.tolist():
        assert_close(
            shared.agents[index].model_.beta,
            reference.agents[index].model_.beta,
            ulps=0,
            rtol=EPISODE_RTOL,
        )
        np.testing.assert_array_equal(
            shared.agents[index].model_.X, reference.agents[index].model_.X
        )
    # rows are kept once, in the observation's float32
    assert shared.log_.dtype == np.float32


def test_agents_on_different_streams_keep_their_own_rows():
    agents = [Greedy(), Greedy(), Margin(alpha=0.5), Adaptive(rho=0.25)]
    envs = gym.make_vec(ID, num_envs=4, horizon=150, link="linear", lockstep=True)
    together = run_vector_episode(envs, CutoffReplicas(agents), seed=[1, 2, 1, 3])
    env = gym.make(ID, horizon=150, link="linear")
    for agent, trajectory, seed in zip(agents, together, [1, 2, 1, 3], strict=True):
        alone = run_episode(env, agent.clone(), seed=seed)
        np.testing.assert_array_equal(trajectory.actions, alone.actions)


class GreedyWithOption(Greedy):
    """An agent with a hyperparameter its class does not classify (a later option)."""

    def __init__(self, l2: float = 1.0, solver: str = "incremental", option: int = 0) -> None:
        super().__init__(l2=l2, solver=solver)
        self.option = option


class GreedyWithDeclaredOption(GreedyWithOption):
    """The same option, declared: the shared fit honours its default only."""

    replica_fit: ClassVar[dict[str, Any]] = {**Greedy.replica_fit, "option": (0,)}


class GreedyWithOwnLearn(Greedy):
    """No new hyperparameter, but its own learning: it has not vouched for the shared fit."""

    def learn(self, x: np.ndarray, y: np.ndarray) -> None:
        super().learn(x, y)


def test_agents_the_shared_path_does_not_know_learn_on_their_own():
    from agents.lending._fast.replicas import shares_state

    envs = gym.make_vec(ID, num_envs=4, horizon=50, link="linear", lockstep=True)
    agents = [Greedy(), GreedyWithOption(), Adaptive(rho="theory"), Adaptive(project=True)]
    replicas = CutoffReplicas(agents)
    run_vector_episode(envs, replicas, seed=0)
    assert replicas.shared_agents_.tolist() == [0]
    assert not any(shares_state(agent) for agent in agents[1:])
    logistic = gym.make_vec(ID, num_envs=2, horizon=20, link="logistic", lockstep=True)
    replicas = CutoffReplicas([Greedy(), Greedy()])
    run_vector_episode(logistic, replicas, seed=0)
    assert replicas.shared_ is None


def test_a_new_hyperparameter_keeps_or_explicitly_refuses_the_shared_fit():
    """A subclass's hyperparameter is classified by its class, or the class says it is not."""
    # unclassified: refused at any value, and the refusal names the hyperparameter
    for agent in (GreedyWithOption(), GreedyWithOption(option=1)):
        assert "['option']" in str(agent.replica_fit_refusal())
    assert "overrides ['learn']" in str(GreedyWithOwnLearn().replica_fit_refusal())
    # declared: shared at the values it lists, refused (naming the value) elsewhere
    assert GreedyWithDeclaredOption().replica_fit_refusal() is None
    assert "option=1" in str(GreedyWithDeclaredOption(option=1).replica_fit_refusal())
    makers = [
        GreedyWithDeclaredOption,
        lambda: GreedyWithDeclaredOption(option=1),
        GreedyWithOption,
        GreedyWithOwnLearn,
    ]
    replicas = CutoffReplicas([make() for make in makers])
    envs = gym.make_vec(ID, num_envs=len(makers), horizon=60, link="linear", lockstep=True)
    shared = run_vector_episode(envs, replicas, seed=2)
    assert replicas.shared_agents_.tolist() == [0]
    # every agent decides as it does alone, shared or not
    env = gym.make(ID, horizon=60, link="linear")
    for make, trajectory in zip(makers, shared, strict=True):
        alone = run_episode(env, make(), seed=2)
        np.testing.assert_array_equal(trajectory.actions, alone.actions)
        np.testing.assert_array_equal(trajectory.oracle_loss, alone.oracle_loss)


def test_every_lending_agents_hyperparameters_are_classified_or_it_says_why():
    """Each agent class of agents.lending either lists every hyperparameter or refuses by name."""
    import agents.lending as lending
    from agents.lending.base import CutoffAgent

    classes = [getattr(lending, name) for name in lending.__all__]
    classes = [c for c in classes if issubclass(c, CutoffAgent) and c is not CutoffAgent]
    assert len(classes) == 11
    for cls in classes:
        refusal = cls._replica_refusal
        names = set(cls().get_params(deep=False))
        if refusal is None:
            assert names <= set(cls.replica_fit), cls
        else:
            assert cls.__name__ in refusal
    shared = {"Greedy", "EpsilonGreedy", "OneSidedEpsilonGreedy", "Noise", "OneSidedNoise"}
    shared |= {"Margin", "Adaptive"}
    assert {cls.__name__ for cls in classes if cls._replica_refusal is None} == shared


def test_the_row_log_keeps_rows_float32_would_round_in_float64():
    from agents.lending._fast.row_log import RowLog

    log = RowLog(2, np.dtype(np.float32))
    log.append(np.array([[1.0, 2.0]], dtype=np.float32))
    log.append(np.array([[0.5, 0.25]]))  # exactly representable: stays float32
    assert log.dtype == np.float32
    log.append(np.array([[0.1, 1.0]]))  # 0.1 is not a float32
    assert log.dtype == np.float64
    np.testing.assert_array_equal(log.rows(np.array([2, 0])), [[0.1, 1.0], [1.0, 2.0]])


def test_agents_learning_alone_keep_their_rows_in_the_log_and_decide_the_same():
    from agents.lending._fast.row_log import LoggedGLMEstimator

    agents = [Greedy(), Adaptive(rho=0.25), Margin(alpha=0.5), Greedy(solver="exact")]
    kwargs = dict(dataset="breast_cancer", link="logistic", horizon=150)
    envs = gym.make_vec(ID, num_envs=len(agents), lockstep=True, **kwargs)
    logged = CutoffReplicas([agent.clone() for agent in agents])
    together = run_vector_episode(envs, logged, seed=3)
    reference = CutoffReplicas([agent.clone() for agent in agents], share=False)
    apart = run_vector_episode(envs, reference, seed=3)
    for agent, a, b in zip(agents, together, apart, strict=True):
        assert_episodes_agree(a, b, path=repr(agent))
    for mine, theirs in zip(logged.agents, reference.agents, strict=True):
        assert type(mine.model_) is LoggedGLMEstimator
        assert mine.model_._x.size == 0  # no float64 copy of the rows
        np.testing.assert_array_equal(mine.model_.X, theirs.model_.X)
        assert_close(mine.model_.beta, theirs.model_.beta, ulps=0, rtol=EPISODE_RTOL)
    # the warm start and each observed batch are logged once for all four agents
    assert logged.log_ is not None
    assert logged.log_.n <= len(together[0].actions) + len(logged.agents[0].model_.X)


def test_the_suites_paper_fit_task_runs_as_replicas_with_the_rows_each_cell_gives_alone():
    """The jiang suite's cells (paper fit: Adaptive's rho schedule and in-batch A) on the engine."""
    from osfb_gym.bench.executors import replica_groups, run_cell, run_task
    from osfb_gym.bench.suites.jiang import LinearSettings, sweep

    suite = LinearSettings(
        datasets=("breast_cancer",),
        cutoffs=(0.5,),
        alphas=(2.0**-10, 2.0**-3, 2.0),
        horizon=150,
    )
    cells = sweep(suite, seeds=(1,)).cells()
    assert [len(group) for group in replica_groups(cells)] == [len(cells)]  # one vector episode
    ignore = {"seconds"}
    for together, cell in zip(run_task((cells, {})), cells, strict=True):
        alone = run_cell(cell)
        assert_close(
            {k: v for k, v in together.items() if k not in ignore},
            {k: v for k, v in alone.items() if k not in ignore},
            ulps=0,
            rtol=EPISODE_RTOL,
            path=cell.agent,
        )


@pytest.mark.parametrize("dim", [4, 12])
def test_stacked_one_row_updates_are_the_per_state_blas_calls(dim, monkeypatch):
    """Stacked NumPy where the self-check allows it, per-state dger otherwise: same decisions."""
    import agents.lending._fast.shared_rls as module

    kwargs = dict(link="linear", horizon=250, dim=dim)
    envs = gym.make_vec(ID, num_envs=len(GRID), lockstep=True, **kwargs)
    exact = module._numpy_rank_one_is_dger(dim)
    runs = {}
    for batched in (True, False):
        monkeypatch.setattr(module, "_numpy_rank_one_is_dger", lambda dim, flag=batched: flag)
        replicas = CutoffReplicas([agent.clone() for agent in GRID])
        runs[batched] = (run_vector_episode(envs, replicas, seed=5), replicas)
    if not exact:
        pytest.skip(f"this BLAS' dger is not NumPy's arithmetic at d = {dim}")
    for a, b in zip(runs[True][0], runs[False][0], strict=True):
        assert_episodes_agree(a, b)
    one, other = runs[True][1].shared_, runs[False][1].shared_
    used = np.unique(one.slot[: one.n_agents])
    np.testing.assert_array_equal(used, np.unique(other.slot[: other.n_agents]))
    assert_close(one.A_inv[used], other.A_inv[used], ulps=0, rtol=EPISODE_RTOL)


EXPLORERS = [
    EpsilonGreedy(alpha=0.5),
    EpsilonGreedy(alpha=4.0),
    OneSidedEpsilonGreedy(alpha=0.25),
    Noise(alpha=1.0),
    OneSidedNoise(alpha=0.5),
    Margin(alpha=0.125),
    Greedy(),
    Adaptive(rho=0.25),
]


@pytest.mark.parametrize("batch_size", [1, 3])
def test_perturbations_computed_a_block_ahead_cross_blocks_as_each_agent_draws(
    batch_size, monkeypatch
):
    """Blocks of 7 applicants: the perturbations of many blocks are each agent's own draws."""
    import agents.lending._fast.replicas as module

    monkeypatch.setattr(module, "_BLOCK", 7)
    kwargs = dict(link="linear", horizon=40, batch_size=batch_size)
    envs = gym.make_vec(ID, num_envs=len(EXPLORERS), lockstep=True, **kwargs)
    replicas = CutoffReplicas([agent.clone() for agent in EXPLORERS])
    together = run_vector_episode(envs, replicas, seed=4)
    assert replicas._block == max(1, 7 // batch_size)
    env = gym.make(ID, **kwargs)
    for agent, trajectory in zip(EXPLORERS, together, strict=True):
        alone = run_episode(env, agent.clone(), seed=4)
        assert_episodes_agree(trajectory, alone, path=repr(agent))


@pytest.mark.parametrize("dim", [5, 16, 17])
def test_the_compiled_dger_loop_is_scipys_dger(dim):
    from agents.lending._fast import rank_one as _rank_one

    if not _rank_one.warm():
        pytest.skip("numba is not installed (the optional 'fast' extra) or OSFB_NUMBA=0")
    rng = np.random.default_rng(dim)
    stack = rng.standard_normal((9, dim, dim))
    expected = stack.copy()
    slots, gains = np.array([4, 0, 7, 2]), rng.standard_normal((4, dim))
    alphas = -1.0 / (1.0 + rng.random(4))
    _rank_one.rank_one_each(stack, slots, gains, alphas)
    _rank_one.rank_one_each_python(expected, slots, gains, alphas)
    # each entry is a + alpha g_i g_j, rounded once fused or twice not: within 1 ULP, or a
    # few EPS of the terms where the update cancels the entry
    terms = np.abs(stack) + np.abs(alphas)[:, None, None].max() * np.abs(gains).max() ** 2
    assert_close(stack, expected, ulps=2, atol=eps_of_largest(terms))
    assert not np.array_equal(stack[slots], rng.standard_normal((4, dim, dim)))


@pytest.mark.parametrize("dim", [6, 17])
def test_the_compiled_one_row_update_is_numpys(dim, monkeypatch):
    """numba's one-row update (d = 6: element-wise rank one; 17: dger) vs NumPy's.

    Three ways: NumPy alone; NumPy's BLAS products then the compiled element-wise
    update; the products too compiled in (NumPy's own cblas_dgemv/cblas_ddot).
    """
    import agents.lending._fast.shared_rls as module
    from agents.lending._fast import rank_one as _rank_one

    if not _rank_one.warm():
        pytest.skip("numba is not installed (the optional 'fast' extra) or OSFB_NUMBA=0")
    kwargs = dict(link="linear", horizon=300, dim=dim)
    envs = gym.make_vec(ID, num_envs=len(GRID), lockstep=True, **kwargs)
    runs = {}
    for way in ("blas", "kernel", "numpy"):
        kernel = _rank_one.one_row_kernel() if way != "numpy" else None
        blas = _rank_one.one_row_blas_kernel() if way == "blas" else None
        monkeypatch.setattr(module, "one_row_kernel", lambda kernel=kernel: kernel)
        monkeypatch.setattr(module, "one_row_blas_kernel", lambda blas=blas: blas)
        replicas = CutoffReplicas([agent.clone() for agent in GRID])
        runs[way] = (run_vector_episode(envs, replicas, seed=6), replicas)
        assert (replicas.shared_._kernel is not None) == (way != "numpy")
        assert (replicas.shared_._blas_kernel is not None) == (blas is not None)
    if runs["blas"][1].shared_._blas_kernel is None:
        pytest.skip("NumPy's BLAS is not its bundled OpenBLAS: no compiled products")
    for way in ("blas", "kernel"):
        for a, b in zip(runs[way][0], runs["numpy"][0], strict=True):
            assert_episodes_agree(a, b, path=way)
        one, other = runs[way][1].shared_, runs["numpy"][1].shared_
        np.testing.assert_array_equal(one.slot, other.slot)
        used = np.unique(one.slot[: one.n_agents])
        assert used.size > 1  # states split: the test covers many states a step
        for name in ("A_inv", "beta", "rls_beta", "xty", "n", "n_at_refit", "refit_limit"):
            # counts exactly, estimates within the episodes' bound
            assert_close(
                getattr(one, name)[used],
                getattr(other, name)[used],
                ulps=0,
                rtol=EPISODE_RTOL,
                path=name,
            )


@pytest.mark.parametrize("dim", [2, 5, 15, 16, 17, 33])
def test_numpys_blas_compiled_in_gives_numpys_products(dim):
    """The compiled cblas_dgemv/cblas_ddot give np.matmul's bits (the guard SharedRLS uses)."""
    from agents.lending._fast import rank_one as _rank_one
    from agents.lending._fast.shared_rls import _numpy_rank_one_is_dger

    if _rank_one.one_row_blas_kernel() is None:
        pytest.skip("numba is not installed, OSFB_NUMBA=0, or NumPy's BLAS is not bundled")
    assert _rank_one.compiled_blas_is_numpys(dim, _numpy_rank_one_is_dger(dim))
    assert _rank_one.compiled_blas_is_numpys(dim, not _numpy_rank_one_is_dger(dim))


def test_a_history_range_is_the_slice_of_the_whole_history():
    """``_History.collect(n, start)`` (a refit's new rows) on random chains of split states."""
    from agents.lending._fast.shared_rls import _History

    rng = np.random.default_rng(0)
    for _ in range(200):
        nodes = [_History(None, 0)]
        for _ in range(int(rng.integers(1, 6))):
            node = nodes[int(rng.integers(len(nodes)))]
            size = int(rng.integers(0, 20))
            node.indices.extend(rng.integers(0, 1000, size).tolist())
            node.y.extend(rng.random(size).tolist())
            total = node.parent_len + len(node.indices)
            nodes.append(_History(node, int(rng.integers(node.parent_len, total + 1))))
        node = nodes[int(rng.integers(len(nodes)))]
        n = int(rng.integers(0, node.parent_len + len(node.indices) + 1))
        start = int(rng.integers(0, n + 1))
        indices, y = node.collect(n)
        part_indices, part_y = node.collect(n, start)
        np.testing.assert_array_equal(part_indices, indices[start:])
        np.testing.assert_array_equal(part_y, y[start:])


def test_a_vector_episode_longer_than_its_first_map_keeps_every_step(monkeypatch):
    """run_vector_episode's step map grows: across growths, the trajectories of agents alone."""
    from osfb_gym import runner

    monkeypatch.setattr(runner._StepColumns, "START", 7)  # 30 steps: the map grows twice
    makers = [Greedy, lambda: Margin(alpha=0.5), lambda: Adaptive(rho=0.5)]
    envs = gym.make_vec(ID, num_envs=3, horizon=30, batch_size=2, lockstep=True)
    trajectories = run_vector_episode(envs, CutoffReplicas([make() for make in makers]), seed=4)
    env = gym.make(ID, horizon=30, batch_size=2)
    for make, trajectory in zip(makers, trajectories, strict=True):
        alone = run_episode(env, make(), seed=4)
        assert trajectory.actions.shape == alone.actions.shape == (30, 2)
        for name in ("rewards", "oracle_loss", "actions", "n_revealed"):
            mine, theirs = getattr(trajectory, name), getattr(alone, name)
            assert mine.dtype == theirs.dtype, name
            np.testing.assert_array_equal(mine, theirs)


def test_a_cutoff_agent_declares_its_replica_runner_and_when_it_runs_alone():
    from osfb_gym.core.family import load
    from osfb_gym.core.replicas import replica_spec_of

    spec = replica_spec_of(Adaptive(rho=0.5))
    assert spec is not None and spec.runs_on(ID) and not spec.runs_on("CartPole-v1")
    assert load(spec.runner) is CutoffReplicas
    # the paper's logistic fit and a non-default refit run alone (their own choice)
    assert replica_spec_of(Greedy(design_l2=1e-6)) is None
    assert replica_spec_of(Adaptive(free_intercept=True)) is None
    assert replica_spec_of(Adaptive(refit="expand")) is None
    assert replica_spec_of(Perceptron()) is None  # no replica_spec at all

    class ElsewhereGreedy(Greedy):
        env_ids = ("DelayedImpactLending-v0",)

    assert replica_spec_of(ElsewhereGreedy()) is None  # no lockstep env its runner drives


def test_step_columns_promote_a_wider_dtype_instead_of_casting_it(monkeypatch):
    from osfb_gym import runner

    monkeypatch.setattr(runner._StepColumns, "START", 2)
    columns = runner._StepColumns(2)
    steps = [np.array([1, 2]), np.array([3, 4]), np.array([0.5, 1.5]), np.array([5, 6])]
    for values in steps:
        columns.append(values)
    joined = columns.join()
    np.testing.assert_array_equal(joined, np.stack(steps, axis=1))
    assert joined.dtype == np.stack(steps, axis=1).dtype == np.float64
