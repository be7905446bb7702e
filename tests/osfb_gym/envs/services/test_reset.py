"""The services reset's fast draws equal v0's draws written plainly.

The draws themselves (the generator's numbers, labels, groups: integers and
the same consumed state) exactly; what is computed from them in two codes
(centres plus spreads, normalised rows, SPD matrices, least-squares fits)
within a stated bound, since another SIMD width or BLAS kernel may round the
products otherwise (``assert_same_world``).
"""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import osfb_gym  # noqa: F401
from osfb_gym.envs.services import populations as P
from osfb_gym.envs.services.world import FAMILIES, Population
from tests.helpers import assert_close, eps_of_largest

pytestmark = pytest.mark.crossimpl  # .ci/run runs these again under another SIMD dispatch


def plain_clusters(n, dim, loss, n_clusters, n_groups, correlation, rng, outliers=0.0):
    """v0's draw_clusters as first written: numpy's choice, permutation and [labels] gathers."""
    shares = rng.dirichlet(np.ones(n_clusters))
    labels = rng.permutation(
        np.concatenate([np.arange(n_clusters), rng.choice(n_clusters, n - n_clusters, p=shares)])
    )
    home = rng.permutation(np.arange(labels.max() + 1) % n_groups)[labels]
    other = rng.integers(0, n_groups, labels.size)
    groups = np.where(rng.random(labels.size) < correlation, home, other).astype(np.int64)
    count = int(outliers * n)
    if loss == "cosine":
        centres = rng.standard_normal((n_clusters, dim))
        centres /= np.linalg.norm(centres, axis=1, keepdims=True)
        spread = rng.uniform(*P.COSINE_SPREAD_RANGE, n_clusters)[labels]
        phi = centres[labels] + spread[:, None] * rng.standard_normal((n, dim))
        if count:
            loners = rng.choice(n, count, replace=False)
            phi[loners] = rng.standard_normal((count, dim))
        phi /= np.linalg.norm(phi, axis=1, keepdims=True)
        weights = np.exp(P.WEIGHT_LOG_STD * rng.standard_normal(n))
        return Population("cosine", phi, weights, groups)
    centres = P.CENTRE_SPREAD * rng.standard_normal((n_clusters, dim))
    spread = rng.uniform(*P.SPREAD_RANGE, n_clusters)[labels]
    phi = centres[labels] + spread[:, None] * rng.standard_normal((n, dim))
    if count:
        loners = rng.choice(n, count, replace=False)
        phi[loners] = rng.uniform(-3 * P.CENTRE_SPREAD, 3 * P.CENTRE_SPREAD, (count, dim))
    if loss == "squared":
        return Population("squared", phi, np.ones(n), groups)
    if loss == "huber":
        deltas = rng.uniform(*P.HUBER_DELTA_RANGE, n_clusters)[labels]
        return Population("huber", phi, np.ones(n), groups, deltas=deltas)
    weights = np.exp(P.WEIGHT_LOG_STD * rng.standard_normal(n))
    matrices = P.random_spd(n_clusters, dim, rng)
    return Population("mahalanobis", phi, weights, groups, matrices=matrices, matrix_index=labels)


def assert_same_world(new: Population, old: Population, rtol: float = 0.0) -> None:
    """Every field: integers exactly, floats within 8 ULPs or 16 EPS of the field's largest.

    A few products and sums per value (a centre plus a spread times a normal, a
    row over its norm, a product of small matrices), which a fused multiply-add
    or another order rounds at most a few times otherwise; ``rtol`` for fields
    fitted by least squares, whose conditioning multiplies the inputs' rounding.
    """
    assert type(new) is Population and set(vars(new)) >= set(vars(old))
    for name in old.__dataclass_fields__:
        a, b = getattr(new, name), getattr(old, name)
        if isinstance(b, np.ndarray):
            assert a.dtype == b.dtype and a.shape == b.shape, name
            assert_close(a, b, ulps=8, atol=eps_of_largest(b), rtol=rtol, path=name)
        else:
            assert a == b, name


@pytest.fixture(params=["1", "0"], ids=["numba", "numpy"])
def either_path(request, monkeypatch):
    """Each test twice: with the compiled loops between the draws (if numba is here), without."""
    if request.param == "1":
        pytest.importorskip("numba")  # imported: the loops run at any size
    monkeypatch.setenv("OSFB_NUMBA", request.param)
    assert (P.compiled_draws() is not None) == (request.param == "1")
    return request.param


@pytest.mark.parametrize("family", FAMILIES)
def test_draw_clusters_draws_v0s_worlds_and_leaves_the_same_generator_state(family, either_path):
    for seed, (n, dim, k, g, outliers) in enumerate(
        ((500, 2, 10, 2, 0.0), (37, 3, 4, 3, 0.1), (12, 1, 12, 5, 0.0), (80, 4, 1, 1, 0.3))
    ):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        new = P.draw_clusters(n, dim, family, k, g, 0.5, a, outliers)
        old = plain_clusters(n, dim, family, k, g, 0.5, b, outliers)
        assert_same_world(new, old)
        assert a.bit_generator.state == b.bit_generator.state


def test_draw_linear_draws_v0s_worlds(either_path):
    for seed, (n, dim, samples, k, g) in enumerate(((40, 2, 5, 4, 2), (9, 3, 6, 9, 3))):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        new = P.draw_linear(n, dim, samples, k, g, 0.7, a)
        shares = b.dirichlet(np.ones(k))
        labels = b.permutation(np.concatenate([np.arange(k), b.choice(k, n - k, p=shares)]))
        home = b.permutation(np.arange(k) % g)[labels]
        other = b.integers(0, g, n)
        groups = np.where(b.random(n) < 0.7, home, other)
        centres = P.CENTRE_SPREAD * b.standard_normal((k, dim))
        spread = b.uniform(*P.SPREAD_RANGE, k)[labels]
        truth = centres[labels] + spread[:, None] * b.standard_normal((n, dim))
        factors = np.linalg.cholesky(P.random_spd(k, dim, b))
        members = np.repeat(np.arange(n), samples)
        X = np.einsum("nij,nj->ni", factors[labels[members]], b.standard_normal((n * samples, dim)))
        y = np.einsum("nd,nd->n", X, truth[members]) + P.LINEAR_NOISE_STD * b.standard_normal(
            n * samples
        )
        # least-squares fits of 5-6 samples per user: conditioning up to ~1e4 here
        assert_same_world(new, P.linear_population(X, y, members, groups), rtol=1e-9)
        assert a.bit_generator.state == b.bit_generator.state


def test_cluster_labels_take_every_cluster_and_the_searchs_ties_to_the_right(either_path):
    # uniforms exactly at a cumulative share: side="right" puts them in the next cluster
    for k in (1, 2, 5, 10):
        for seed in range(30):
            a, b = np.random.default_rng(seed), np.random.default_rng(seed)
            got = P.cluster_labels(3 * k + seed, k, a)
            shares = b.dirichlet(np.ones(k))
            drawn = b.choice(k, 2 * k + seed, p=shares)
            expected = b.permutation(np.concatenate([np.arange(k), drawn]))
            # labels from uniforms against cumulative shares: another rounding of the
            # shares moves a label only for a uniform within ~1e-15 of a share's edge
            # (~1e-13 over this test); exact ties are tested below
            assert got.dtype == np.int64 and got.tobytes() == expected.tobytes()
    if either_path == "1":
        from osfb_gym.envs.services._fast import compiled_draws as loops

        draws = np.array([1.0, 0.0, 3.0, 0.0])  # cdf 0.25, 0.25, 1.0, 1.0: ties
        cdf = (draws * (1.0 / draws.cumsum()[-1])).cumsum()
        cdf /= cdf[-1]
        uniforms = np.array([0.0, 0.25, 0.2499999, 0.5, 1.0, 0.9999999])
        expected = np.concatenate([np.arange(4), cdf.searchsorted(uniforms, side="right")])
        got = np.empty(10, dtype=np.int64)
        loops.labels(draws, uniforms, got)
        assert got.tobytes() == expected.tobytes()


def test_draw_groups_with_n_clusters_given_equals_it_computed(either_path):
    for seed in range(20):
        labels = P.cluster_labels(60, 7, np.random.default_rng(seed))
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        given = P.draw_groups(labels, 3, 0.4, a, 7)
        computed = P.draw_groups(labels, 3, 0.4, b)
        assert given.dtype == np.int64 and given.tobytes() == computed.tobytes()
        assert a.bit_generator.state == b.bit_generator.state


def test_a_drawn_population_equals_the_checked_construction_and_names_bad_fields():
    rng = np.random.default_rng(0)
    phi, groups = rng.standard_normal((6, 2)), np.array([0, 1, 0, 1, 1, 0])
    fields = dict(deltas=np.full(6, 0.5))
    drawn = Population.drawn("huber", phi, np.ones(6), groups, **fields)
    checked = Population("huber", phi, np.ones(6), groups, **fields)
    assert vars(drawn).keys() == vars(checked).keys()
    assert_same_world(drawn, checked)
    assert drawn.loss_at(phi[2]).tobytes() == checked.loss_at(phi[2]).tobytes()
    with pytest.raises(TypeError, match="delta"):
        Population.drawn("huber", phi, np.ones(6), groups, delta=np.ones(6))


def test_drawn_worlds_share_read_only_unit_weights(either_path):
    a = P.draw_clusters(50, 2, "squared", 3, 2, 0.5, np.random.default_rng(0))
    b = P.draw_clusters(50, 2, "huber", 3, 2, 0.5, np.random.default_rng(1))
    assert a.weights is b.weights and not a.weights.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        a.weights[0] = 2.0


def test_reset_keeps_its_arrays_and_channels_apart(either_path):
    env = gym.make("MultiServiceChoice-v0", n_users=30, n_services=4).unwrapped
    obs, info = env.reset(seed=3)
    inner = env
    assert np.isnan(inner._services).all() and inner._services.shape == (4, inner.service_dim)
    assert (inner._choice == 4).all() and inner._choice.dtype == np.int64
    shared = [
        obs["groups"],
        obs["choices"],
        info["feedback"]["groups"],
        info["oracle"]["groups"],
        info["oracle"]["preferences"],
    ]
    state = [inner._world.groups, inner._world.preferences, inner._choice, inner._best]
    for i, array in enumerate(shared):
        assert not any(np.shares_memory(array, other) for other in state + shared[i + 1 :])
    # a second reset: a new world, nothing of the first one's reused
    obs2, info2 = env.reset()
    assert not np.shares_memory(info2["oracle"]["preferences"], info["oracle"]["preferences"])
    assert not np.array_equal(info2["oracle"]["preferences"], info["oracle"]["preferences"])


def test_a_small_world_alone_imports_no_numba_and_draws_the_same_worlds(either_path, tmp_path):
    """Resets of the default env in a fresh process: NumPy's lines, numba not imported."""
    saved = tmp_path / "worlds.npz"
    code = (
        "import sys, numpy as np, gymnasium as gym, osfb_gym\n"
        "env = gym.make('MultiServiceChoice-v0', reference_restarts=0)\n"
        "infos = [env.reset(seed=3)[1]] + [env.reset()[1] for _ in range(3)]\n"
        "arrays = {f'{key}{n}': i['oracle'][key] for n, i in enumerate(infos)"
        " for key in ('preferences', 'groups')}\n"
        f"np.savez({str(saved)!r}, **arrays)\n"
        "print('numba' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False"]
    env = gym.make("MultiServiceChoice-v0", reference_restarts=0)  # here: this test's path
    infos = [env.reset(seed=3)[1]] + [env.reset()[1] for _ in range(3)]
    with np.load(saved) as there:
        for n, info in enumerate(infos):
            # the groups drawn exactly; the preferences computed in two codes (compiled
            # here, NumPy there): within assert_same_world's bound
            np.testing.assert_array_equal(info["oracle"]["groups"], there[f"groups{n}"])
            want = there[f"preferences{n}"]
            assert_close(info["oracle"]["preferences"], want, ulps=8, atol=eps_of_largest(want))
