"""The online SVM: refits equal a batch SVM on the stored data; it learns one-sided."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.svm import SVC

from agents.apple import OnlineSVM
from tests.agents.apple.streams import DIM, Always, mean_metrics, play, spaces_for, stream
from tests.helpers import assert_close, eps_of_largest


def test_a_refit_is_the_batch_svm_over_the_stored_examples():
    x, y = stream(150, 5, noise=0.1, seed=0)
    agent = OnlineSVM(C=10.0, class_weight={0: 0.5, 1: 2.0}, tol=1e-8)
    play(agent, x, y, one_sided=False)
    agent._refit()
    n = agent.n_stored_
    np.testing.assert_array_equal(agent.X_[:n], x.astype(np.float64))
    np.testing.assert_allclose(agent.gram_[:n, :n], x @ x.T.astype(np.float64), atol=1e-6)
    batch = SVC(kernel="linear", C=10.0, class_weight={-1: 0.5, 1: 2.0}, tol=1e-8)
    batch.fit(x.astype(np.float64), 2 * y - 1)
    np.testing.assert_allclose(agent.coef_, batch.coef_[0], atol=1e-5)
    assert agent.intercept_ == pytest.approx(batch.intercept_[0], abs=1e-5)
    assert set(agent.support_) == set(batch.support_)


def test_refits_only_on_mistakes_or_margin_violations():
    x, y = stream(300, 5, seed=1)
    figure_3 = OnlineSVM(C=10.0)
    relaxed = OnlineSVM(C=10.0, margin=0.0)
    play(figure_3, x, y)
    play(relaxed, x, y)
    assert 0 < figure_3.n_updates_ < figure_3.n_learned_
    assert 0 < relaxed.n_updates_ < figure_3.n_updates_


def test_buffer_keeps_the_last_examples_and_a_consistent_gram_matrix():
    x, y = stream(100, 4, seed=2)
    agent = OnlineSVM(buffer=30)
    play(agent, x, y, one_sided=False)
    assert agent.n_stored_ == 30 and agent.X_.shape == (30, 4)
    stored = {tuple(row) for row in agent.X_}
    assert stored == {tuple(row) for row in x[-30:].astype(np.float64)}
    np.testing.assert_allclose(agent.gram_, agent.X_ @ agent.X_.T, atol=1e-6)
    unbounded = OnlineSVM(buffer=None)
    play(unbounded, x, y, one_sided=False)
    assert unbounded.n_stored_ == 100  # grown past its initial capacity


def test_keeps_tasting_until_both_classes_are_revealed():
    agent = OnlineSVM()
    agent.reset(*spaces_for(3), seed=0)
    for _ in range(5):
        x = np.random.default_rng(_).standard_normal(3).astype(np.float32)
        assert agent.act(x) == 1
        agent.update(x, 1, -1.0, {"revealed": True, "y": 0})
    assert agent.n_updates_ == 0 and not agent.coef_.any() and agent.intercept_ == 0.0


def test_online_svm_learns_from_one_sided_feedback():
    """Section 4: margin refits let it learn without any sampling."""
    metrics = mean_metrics(OnlineSVM(C=1.0), horizon=400)
    trivial = mean_metrics(Always(0), horizon=400)["cumulative_loss"]  # ~200 mistakes
    # measured F1 0.846 one-sided (0.914 with full feedback), 59 mistakes in 400 steps
    assert metrics["f1"] > 0.75
    assert metrics["cumulative_loss"] < 0.5 * trivial


def test_threshold_biasing_raises_the_svms_minority_recall():
    """Section 6.2: threshold biasing was the more effective weighting for online SVMs."""
    world = {"scenario": "minority", "positive_rate": 0.2, "noise": 0.02, "horizon": 500}
    plain = mean_metrics(OnlineSVM(C=1.0), **world)
    biased = mean_metrics(OnlineSVM(C=1.0, threshold=-0.5), **world)
    # measured recall 0.20 -> 0.62, F1 0.29 -> 0.61
    assert biased["recall"] > plain["recall"] + 0.2
    assert biased["f1"] > plain["f1"] + 0.1


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"C": 0.0}, ValueError, "C"),
        ({"buffer": 1}, ValueError, "buffer"),
        ({"buffer": 10.5}, TypeError, "buffer"),
        ({"margin": -0.5}, ValueError, "margin"),
        ({"tol": 0}, ValueError, "tol"),
        ({"class_weight": {0: 0.0}}, ValueError, r"class_weight\[0\]"),
        ({"threshold": "low"}, TypeError, "threshold"),
    ],
)
def test_bad_hyperparameters_raise_at_reset_naming_them(kwargs, error, name):
    with pytest.raises(error, match=name):
        OnlineSVM(**kwargs).reset(*spaces_for(DIM), seed=0)


def test_sparse_storage_fits_the_same_svm_as_dense(monkeypatch):
    # text features (2^18 buckets) are stored as nonzeros; the fit must not change
    from gymnasium import spaces as gym_spaces

    import agents.apple.svm as svm_module

    rng = np.random.default_rng(0)
    X = (rng.random((300, 64)) < 0.1) * rng.random((300, 64))
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-9)
    y = (X[:, 0] > X[:, 1]).astype(int)
    fits = []
    for sparse_dim in (10**6, 8):
        monkeypatch.setattr(svm_module, "SPARSE_DIM", sparse_dim)
        agent = OnlineSVM(buffer=50)
        agent.reset(gym_spaces.Box(-1, 1, (64,), np.float32), gym_spaces.Discrete(2), seed=0)
        for x, label in zip(X.astype(np.float32), y, strict=True):
            agent.update(x, agent.act(x), 0.0, {"revealed": True, "y": int(label)})
        fits.append((agent.sparse_, agent.coef_.copy(), agent.intercept_, agent.n_updates_))
    (dense, w_dense, b_dense, n_dense), (sparse, w_sparse, b_sparse, n_sparse) = fits
    assert not dense and sparse and n_dense == n_sparse > 10
    np.testing.assert_allclose(w_sparse, w_dense, atol=1e-12)
    assert b_sparse == pytest.approx(b_dense, abs=1e-12)


@pytest.mark.parametrize(
    ("dim", "sparse_dim", "kwargs"),
    [(40, 10**6, {}), (64, 8, {"class_weight": {0: 0.3}}), (30, 10**6, {"C": 1.0, "buffer": 60})],
)
@pytest.mark.crossimpl
def test_libsvm_refits_equal_scikit_learns_svc(monkeypatch, dim, sparse_dim, kwargs):
    # the fast path calls libsvm with SVC's arguments: the same decisions and intercept
    # (libsvm's own numbers, one code); w = dual coefficients @ support vectors, a product
    # BLAS may sum in another order: within 8 ULPs or 64 EPS of its largest entry. A
    # decision sign(w . x + b) flips only within that of zero (~1e-13 per decision).
    from gymnasium import spaces as gym_spaces

    import agents.apple.svm as svm_module

    monkeypatch.setattr(svm_module, "SPARSE_DIM", sparse_dim)
    rng = np.random.default_rng(dim)
    X = ((rng.random((250, dim)) < 0.3) * rng.random((250, dim))).astype(np.float32)
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-9)
    y = ((X[:, 0] - X[:, 1] + 0.3 * rng.standard_normal(250)) > 0).astype(int).tolist()
    runs = []
    for reference in (True, False):
        monkeypatch.setattr(OnlineSVM, "reference_solver", reference)
        agent = OnlineSVM(**{"buffer": 100, **kwargs})
        agent.reset(gym_spaces.Box(-1, 1, (dim,), np.float32), gym_spaces.Discrete(2), seed=0)
        actions = []
        for x, label in zip(X, y, strict=True):
            actions.append(agent.act(x))
            agent.update(x, actions[-1], 0.0, {"revealed": True, "y": label})  # full feedback
        runs.append((actions, agent.coef_.copy(), agent.intercept_, agent.n_updates_))
    (ref_actions, ref_w, ref_b, ref_n), (actions, w, b, n) = runs
    assert (n, actions) == (ref_n, ref_actions) and n > 20
    assert_close(w, ref_w, ulps=8, atol=eps_of_largest(ref_w, 64))
    assert b == ref_b
