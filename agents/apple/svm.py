"""The online SVM of Sculley (2007), Figure 3, and its relaxed variant.

Every revealed example is stored; when one is misclassified or falls inside
the margin (``y f(x) < 1``) the SVM is refit over the stored data. Under
one-sided feedback the margin refits are what let it learn (Section 4): a
tasted positive inside the margin moves the hyperplane back towards the
negatives.

Solver: scikit-learn's ``SVC`` on a precomputed linear kernel. ``SVC`` is
libsvm's SMO, the solver the paper used (Platt's SMO), and it solves
exactly Figure 3's objective, with the bias ``b`` free; ``LinearSVC``
(liblinear) would penalise the bias with the weights, which moves the
hyperplane of a minority class. Neither supports a warm start in
scikit-learn, so the cost is kept down differently: a refit happens only
on a margin violation, which becomes rare once the hyperplane fits; the
Gram matrix of the stored examples is maintained incrementally (one
``O(n d)`` kernel row per revealed example), so a refit costs SMO over
``n`` examples whatever the dimension; and the relaxed variant bounds
``n`` by a buffer.

A refit calls libsvm's trainer (``sklearn.svm._libsvm.fit``) directly,
with the arguments ``SVC(kernel="precomputed").fit`` passes it: the same
solver on the same input, so the same ``(w, b)`` bit for bit, without
``SVC``'s per-call validation of the ``n x n`` Gram matrix (on sms_spam's
episode that validation cost more CPU than SMO itself on the first 800
steps). ``OnlineSVM.reference_solver = True`` goes through ``SVC`` instead;
the tests compare the two.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from sklearn.svm import SVC, _libsvm

from agents.apple.base import COST_CONSTRAINTS, LinearLearner, check_label
from agents.base import Integral, Interval, Real

INITIAL_CAPACITY = 64  # stored examples before the first growth (doubling up to the buffer)
#: above this dimension the stored examples are kept sparse (indices and values of the
#: nonzeros): a buffer of 1000 dense rows of Sculley's 2^18 hashed 4-grams would take 2 GB
SPARSE_DIM = 2**14


class OnlineSVM(LinearLearner):
    """Online SVM: store the revealed examples, refit on a margin violation (Figure 3).

    Predict positive when ``f(x) = w . x + b >= threshold``. Each revealed
    example ``(x, y)``, ``y`` in {-1, +1}, is stored; if it was a mistake or
    ``y f(x) < margin`` (Figure 3: ``margin = 1``), ``(w, b)`` is refit as
    the soft-margin SVM over the stored examples,
    ``min 1/2 ||w||^2 + sum_i C_{y_i} xi_i`` subject to
    ``y_i (w . x_i + b) >= 1 - xi_i``, ``xi_i >= 0``.

    The relaxed online SVM (Sculley and Wachman 2007), which the paper ran
    in its experiments (``C = 100``, buffer 1000, refitting on every margin
    error), relaxes Figure 3 in two ways offered here: ``buffer`` keeps only
    the last examples, bounding each refit's size (``buffer=None`` keeps
    everything: Figure 3 exactly, at a cost growing with the stream), and
    ``margin < 1`` refits less often (``margin = 0``: on mistakes only).

    scikit-learn needs both classes to fit: until the stored examples hold
    both, the learner keeps its start ``w = 0``, ``b = 0`` (a tie, which
    tastes), and a refit that finds one class in the buffer keeps the
    current hypothesis. (The exact SVM of one class, ``w = 0`` and
    ``b = -1`` for negatives, would reject everything forever.)

    Features are expected roughly normalised (``||x|| ~ 1``), as the
    paper's were: the margin is 1 in units of ``w . x``, and features of
    norm ``r`` act like unit-norm ones with ``C r^2``. Scale ``C`` down
    accordingly (e.g. ``C = 100 / dim`` or less for standard normal
    features): SMO slows sharply as the effective ``C`` grows on noisy
    data (600 stored examples of dimension 20 with 2% label noise: about
    20 ms per refit at ``C = 1``, about 1 s at ``C = 100``).

    Parameters
    ----------
    C
        Regularisation: the cost of a unit of margin violation. The paper's
        is 100.
    class_weight
        Example weighting (Section 5): ``{0: c_neg, 1: c_pos}`` multiplies
        ``C`` for each class (``C_y = C c_y``). The paper fixed
        ``C_pos = 100`` and swept ``C_neg`` from 0.001 to 128 (Table 3):
        ``C=100, class_weight={0: C_neg / 100}``.
    threshold
        Threshold biasing (Section 5): predict positive when
        ``w . x + b >= threshold``; refits and violations use the unshifted
        ``w . x + b``. Negative values raise recall on a minority positive
        class (the paper's biases ``0 ... 1`` in Table 2 are
        ``threshold = 0 ... -1``).
    buffer
        Store only the last ``buffer`` revealed examples (the relaxed online
        SVM; the paper's 1000). None stores all of them (Figure 3).
    margin
        Refit when a revealed example has ``y f(x) < margin`` or is a
        mistake; 1 is Figure 3, 0 refits on mistakes only.
    tol
        Stopping tolerance of SMO (scikit-learn's ``SVC(tol=...)``).

    Attributes
    ----------
    coef_
        The weight vector ``w`` (``float64``).
    intercept_
        The bias ``b``.
    class_weights_
        ``(c_neg, c_pos)``.
    n_learned_
        Revealed labels seen.
    n_updates_
        Refits made.
    n_stored_
        Examples in the buffer (kept sparse, as index and value arrays,
        when the dimension exceeds :data:`SPARSE_DIM`: text features).
    support_
        Buffer positions of the support vectors of the last refit.

    Examples
    --------
    >>> import numpy as np
    >>> from gymnasium import spaces
    >>> agent = OnlineSVM(C=100.0)
    >>> agent.reset(spaces.Box(-1, 1, (2,), np.float32), spaces.Discrete(2), seed=0)
    >>> for x, y in [([0.6, 0.8], 1), ([-0.8, -0.6], 0), ([0.9, 0.9], 1)]:
    ...     x = np.array(x, dtype=np.float32)
    ...     agent.update(x, agent.act(x), 0.0, {"revealed": True, "y": y})
    >>> agent.n_updates_, agent.predict(np.array([0.7, 0.7])), agent.predict(np.array([-1, 0]))
    (1, 1, 0)

    References
    ----------
    D. Sculley. Practical learning from one-sided feedback. KDD 2007,
    Figure 3 and Sections 4-5.

    D. Sculley and G. M. Wachman. Relaxed online SVMs for spam filtering.
    SIGIR 2007.

    J. Platt. Sequential minimal optimization: a fast algorithm for training
    support vector machines. In Advances in Kernel Methods, MIT Press, 1998.
    """

    #: refit through scikit-learn's ``SVC`` (the reference) instead of libsvm directly
    reference_solver: ClassVar[bool] = False

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        **COST_CONSTRAINTS,
        "C": [Interval(Real, 0, None, closed="neither")],
        "buffer": [Interval(Integral, 2, None, closed="left"), None],
        "margin": [Interval(Real, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        C: float = 100.0,  # noqa: N803  (the SVM's name for it, as in scikit-learn)
        class_weight: dict[int, float] | None = None,
        threshold: float = 0.0,
        buffer: int | None = 1000,
        margin: float = 1.0,
        tol: float = 1e-3,
    ) -> None:
        self.C = C
        self.class_weight = class_weight
        self.threshold = threshold
        self.buffer = buffer
        self.margin = margin
        self.tol = tol

    def reset(
        self,
        observation_space: gym.Space,
        action_space: gym.Space,
        *,
        seed: int | None = None,
        feedback: dict[str, Any] | None = None,
    ) -> None:
        """Start from ``w = 0``, ``b = 0`` with an empty store."""
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        # refits write float64 weights; keeping them float64 avoids rounding the SVM's solution
        self.coef_ = np.zeros(self.coef_.shape[0], dtype=np.float64)
        capacity = INITIAL_CAPACITY if self.buffer is None else min(INITIAL_CAPACITY, self.buffer)
        dim = self.coef_.shape[0]
        self.sparse_ = dim > SPARSE_DIM
        self.X_ = np.empty((0 if self.sparse_ else capacity, dim), dtype=np.float64)
        self.rows_: list[tuple[np.ndarray, np.ndarray]] = []
        self.y_ = np.empty(capacity, dtype=np.int8)
        self.gram_ = np.empty((capacity, capacity), dtype=np.float64)
        self.n_stored_ = 0
        self.next_slot_ = 0
        self.support_ = np.empty(0, dtype=np.intp)

    # ------------------------------------------------------------------ storage
    def _grow(self) -> None:
        capacity = self.y_.shape[0]
        new = 2 * capacity if self.buffer is None else min(2 * capacity, int(self.buffer))
        y = np.empty(new, dtype=np.int8)
        gram = np.empty((new, new), dtype=np.float64)
        y[:capacity] = self.y_
        gram[:capacity, :capacity] = self.gram_
        if not self.sparse_:
            X = np.empty((new, self.X_.shape[1]), dtype=np.float64)
            X[:capacity] = self.X_
            self.X_ = X
        self.y_, self.gram_ = y, gram

    def _store(self, x: np.ndarray, sign: int) -> None:
        """Put ``(x, sign)`` in the next slot (the oldest once the buffer is full)."""
        capacity = self.y_.shape[0]
        if self.next_slot_ == capacity and (self.buffer is None or capacity < self.buffer):
            self._grow()
            capacity = self.y_.shape[0]
        slot = self.next_slot_ % capacity
        self.y_[slot] = sign
        self.n_stored_ = min(self.n_stored_ + 1, capacity)
        if self.sparse_:
            nonzero = np.flatnonzero(x)
            stored = (nonzero, x[nonzero])
            if slot < len(self.rows_):
                self.rows_[slot] = stored
            else:
                self.rows_.append(stored)
            row = np.array([values @ x[index] for index, values in self.rows_[: self.n_stored_]])
        else:
            self.X_[slot] = x
            row = self.X_[: self.n_stored_] @ self.X_[slot]
        self.gram_[slot, : self.n_stored_] = row
        self.gram_[: self.n_stored_, slot] = row
        self.next_slot_ = slot + 1

    # ------------------------------------------------------------------ learning
    def learn(self, x: Any, y: Any) -> None:
        """Store ``(x, y)``; refit if it was a mistake or ``y f(x) < margin``."""
        label = check_label(y)
        x = np.asarray(x, dtype=np.float64)
        self.n_learned_ += 1
        score = self.raw_score(x)
        sign = 1 if label else -1
        violated = sign * score < self.margin or (score >= 0.0) != bool(label)
        self._store(x, sign)
        if violated:
            self._refit()

    def _refit(self) -> None:
        """Solve the SVM over the stored examples (no-op while they hold one class)."""
        n = self.n_stored_
        y = self.y_[:n]
        if y.min() == y.max():
            return
        solve = _solve_svc if self.reference_solver else _solve_libsvm
        # weights[i] = y_i alpha_i of support vector support[i]: f(x) = sum weights K + b
        support, weights, self.intercept_ = solve(
            self.gram_[:n, :n], y, float(self.C), self.class_weights_, float(self.tol)
        )
        if self.sparse_:
            # bincount adds each support vector's weighted values in support order, the
            # same float64 additions as a loop of coef_[index] += weight * values
            index = np.concatenate([self.rows_[slot][0] for slot in support])
            values = np.concatenate(
                [w * self.rows_[slot][1] for w, slot in zip(weights, support, strict=True)]
            )
            self.coef_[:] = np.bincount(index, values, minlength=self.coef_.shape[0])
        else:
            np.dot(weights, self.X_[support], out=self.coef_)
        self.support_ = support
        self.n_updates_ += 1


def _solve_svc(
    gram: np.ndarray,
    y: np.ndarray,
    C: float,
    weights: tuple[float, float],
    tol: float,  # noqa: N803
) -> tuple[np.ndarray, np.ndarray, float]:
    """Return (support, y_i alpha_i, b) of the soft-margin SVM by scikit-learn's ``SVC``."""
    c_neg, c_pos = weights
    svc = SVC(kernel="precomputed", C=C, class_weight={-1: c_neg, 1: c_pos}, tol=tol)
    svc.fit(gram, y)
    # classes_ is [-1, 1], so dual_coef_ holds y_i alpha_i and f > 0 means +1
    return svc.support_, svc.dual_coef_[0], float(svc.intercept_[0])


def _solve_libsvm(
    gram: np.ndarray,
    y: np.ndarray,
    C: float,
    weights: tuple[float, float],
    tol: float,  # noqa: N803
) -> tuple[np.ndarray, np.ndarray, float]:
    """:func:`_solve_svc` without ``SVC``: libsvm called with the arguments ``SVC.fit`` passes.

    ``SVC`` encodes the labels as class indices (-1 -> 0, +1 -> 1), weighs
    ``C`` by ``class_weight_`` in that order, and flips the signs of libsvm's
    dual coefficients and intercept for two classes; so does this.
    """
    _libsvm.set_verbosity_wrap(0)
    support, _, _, dual_coef, intercept, *_ = _libsvm.fit(
        np.ascontiguousarray(gram, dtype=np.float64),
        (y > 0).astype(np.float64),
        svm_type=0,  # C-SVC
        kernel="precomputed",
        degree=3,
        gamma=0.0,
        coef0=0.0,
        tol=tol,
        C=C,
        nu=0.0,
        epsilon=0.0,
        class_weight=np.array(weights, dtype=np.float64),
        sample_weight=np.empty(0, dtype=np.float64),
        shrinking=1,
        probability=0,
        cache_size=200.0,
        max_iter=-1,
        random_seed=0,  # used by probability estimates only
    )
    dual, b = -dual_coef[0], -float(intercept[0])
    if not (np.isfinite(dual).all() and np.isfinite(b)):
        raise ValueError("the SVM's dual coefficients or intercept are not finite")
    return support, dual, b
