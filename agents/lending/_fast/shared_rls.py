"""Shared recursive least squares for replicas: one state per distinct revealed history.

:class:`~agents.lending.CutoffReplicas` runs a paper's grid (the
same few agents at many hyperparameters) on one stream. Every linear,
incremental agent of the grid learns the same way
(:class:`~agents.lending.glm.GLMEstimator`: Sherman-Morrison on ``A^{-1}``,
the gain step on ``beta``, an exact refit when the data grew by 10%), so
its learned state is a function of its ridge strength and of the outcomes
it revealed, nothing else. :class:`SharedRLS` keeps one state per distinct
(ridge, history): agents that revealed the same rows share their
``A^{-1}`` and ``beta``, and a step's update is computed once per distinct
(state, revealed rows) pair. A state splits when its agents reveal
differently; it is updated in place when all of them reveal alike.

The revealed rows are not copied per agent: :class:`~agents.lending._fast.row_log.RowLog` holds each
observed batch once (in the observation's own dtype, float32 for
OneSidedLending, whose float64 view is exact), and a state's history is a
chain of index segments into it (:class:`_History`), shared with the state
it split from.

The arithmetic of an update is the estimator's own, call for call
(:func:`~agents.lending.glm._sherman_morrison`, the same products for the
refits), so a replica decides bit for bit as the agent alone (tested).
"""

from __future__ import annotations

import functools
from array import array

import numpy as np
from scipy.linalg.blas import dger

from agents.lending._fast.rank_one import (
    compiled_blas_is_numpys,
    one_row_blas_kernel,
    one_row_kernel,
    rank_one_each,
)
from agents.lending._fast.row_log import RowLog
from agents.lending.glm import GLMEstimator, _sherman_morrison
from osfb_gym.core.links import Link


@functools.cache
def _stacked_matmul_is_per_matrix(dim: int, trials: int = 32) -> bool:
    """Whether a stacked ``matmul`` (``(k, dim, dim)`` by ``(k, dim, 1)``) gives each ``A @ x``.

    Checked on seeded random matrices (NumPy runs the same BLAS ``gemv`` per
    matrix of the stack; this makes sure of it for the task's ``dim``).
    """
    rng = np.random.default_rng(dim + 1)
    for _ in range(trials):
        stack = rng.standard_normal((4, dim, dim))
        rows = rng.standard_normal((4, dim))
        stacked = np.matmul(stack, rows[:, :, None])[:, :, 0]
        for position in range(4):
            if not np.array_equal(stacked[position], np.matmul(stack[position], rows[position])):
                return False
    return True


@functools.cache
def _numpy_rank_one_is_dger(dim: int, trials: int = 32) -> bool:
    """Whether ``A + (alpha u) u^T`` in NumPy equals BLAS ``dger`` bit for bit at ``dim``.

    ``GLMEstimator``'s rank-one update is ``dger``; whether a NumPy expression
    rounds as it does depends on the BLAS kernel (OpenBLAS' Haswell ``dger``
    multiplies, then adds, below 16 columns and fuses the two above), so it is
    tested here, on seeded random matrices laid out as :class:`SharedRLS`
    keeps them, together with the stacked ``matmul`` against one per matrix.
    """
    rng = np.random.default_rng(dim)
    for _ in range(trials):
        stack = rng.standard_normal((5, dim, dim))
        rows = rng.standard_normal((3, dim))
        slots = rng.choice(5, 3, replace=False)
        gains = np.empty_like(rows)
        for position, slot in enumerate(slots.tolist()):
            np.matmul(stack[slot], rows[position], out=gains[position])
        gathered = stack[slots]
        stacked = np.matmul(gathered, rows[:, :, None])[:, :, 0]
        if not np.array_equal(stacked, gains):
            return False
        alphas = -1.0 / (1.0 + np.matmul(rows[:, None, :], gains[:, :, None])[:, 0, 0])
        expected = stack.copy()
        for slot, u, alpha in zip(slots.tolist(), gains, alphas.tolist(), strict=True):
            dger(alpha, u, u, a=expected[slot].T, overwrite_a=True)
        gathered += (alphas[:, None] * stacked)[:, :, None] * stacked[:, None, :]
        stack[slots] = gathered
        if not np.array_equal(stack, expected):
            return False
    return True


class _History:
    """A state's revealed rows: the first ``parent_len`` of ``parent``'s, then its own."""

    __slots__ = ("indices", "parent", "parent_len", "y")

    def __init__(self, parent: _History | None, parent_len: int) -> None:
        self.parent = parent
        self.parent_len = parent_len
        self.indices = array("q")
        self.y = array("d")

    def collect(self, length: int, start: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Return the (log index, outcome) pairs ``start`` to ``length`` of this history (copies).

        Only the nodes holding that range are read: a refit folds the rows since its
        last one without gathering the whole chain.
        """
        parts: list[tuple[np.ndarray, np.ndarray]] = []
        node: _History | None = self
        while node is not None and length > start:
            own = length - node.parent_len
            if own > 0:
                first = max(start - node.parent_len, 0)
                # views of slices (copies), never of the arrays themselves: a view
                # that outlives this call (a profiler holding the frame) would stop
                # the arrays from growing
                parts.append(
                    (
                        np.frombuffer(node.indices[first:own], dtype=np.int64),
                        np.frombuffer(node.y[first:own], dtype=np.float64),
                    )
                )
                length = node.parent_len
            node = node.parent
        parts.reverse()
        if not parts:
            return np.empty(0, dtype=np.int64), np.empty(0)
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


class SharedRLS:
    """States of linear incremental GLM fits, shared by the agents with one history.

    Parameters
    ----------
    count
        The most agents that will be added (each adds at most one state).
    dim
        Number of features.
    link
        The (linear) link.
    log
        Where observed rows are kept.
    compiled
        Use numba's compiled one-row update when numba is installed (the same
        bits); False: NumPy's alone (the reference).
    """

    def __init__(
        self, count: int, dim: int, link: Link, log: RowLog, *, compiled: bool = True
    ) -> None:
        self.dim = dim
        self.link = link
        self.log = log
        self.A_inv = np.empty((count, dim, dim))
        self.A = np.empty((count, dim, dim))
        self.beta = np.zeros((count, dim))
        self.rls_beta = np.zeros((count, dim))
        self.xty = np.zeros((count, dim))
        self.l2 = np.zeros(count)
        self.refit_growth = np.zeros(count)
        self.n = np.zeros(count, dtype=np.int64)
        self.n_in_A = np.zeros(count, dtype=np.int64)
        self.n_at_refit = np.zeros(count, dtype=np.int64)
        # (1 + refit_growth) * n_at_refit: a state refits once n exceeds it
        self.refit_limit = np.zeros(count)
        self._histories: list[_History | None] = [None] * count
        # one-row updates whose rows are not yet in their states' histories:
        # (log index, outcome, slots), appended in order, moved by _flush
        self._pending: list[tuple[int, float, np.ndarray]] = []
        self.members = np.zeros(count, dtype=np.int64)  # agents per state
        self.slot = np.zeros(count, dtype=np.intp)  # agent -> state
        self.n_agents = 0
        self._free = list(range(count - 1, -1, -1))
        self._starts: list[tuple[float, float, np.ndarray, int]] = []
        # one-row updates of many states in stacked NumPy, where that is dger's arithmetic
        self._batched = _numpy_rank_one_is_dger(dim)
        # else the gains stacked (where that is each state's gemv) and dger called per state
        self._stacked_gains = self._batched or _stacked_matmul_is_per_matrix(dim)
        # the one-row update's element-wise part compiled (numba, optional), else NumPy's
        self._kernel = one_row_kernel() if compiled else None
        # ... and its BLAS products too (NumPy's own, called as np.matmul calls them)
        blas = one_row_blas_kernel() if compiled and self._stacked_gains else None
        self._blas_kernel = (
            blas if blas is not None and compiled_blas_is_numpys(dim, self._batched) else None
        )
        self._gains = np.empty((count, dim))  # the compiled BLAS update's scratch

    @property
    def history(self) -> list[_History | None]:
        """Each state's revealed rows (:class:`_History`; None for a free slot), up to date."""
        if self._pending:
            self._flush()
        return self._histories

    def _flush(self) -> None:
        """Append the pending one-row updates to their states' histories, in order.

        Sorting them by state (stably: each state's rows keep their order) makes
        it one extension per state instead of two appends per state and step.
        """
        pending, self._pending = self._pending, []
        sizes = [len(slots) for _, _, slots in pending]
        slots = np.concatenate([slots for _, _, slots in pending])
        indices = np.repeat(np.array([index for index, _, _ in pending], dtype=np.int64), sizes)
        targets = np.repeat(np.array([target for _, target, _ in pending], dtype=float), sizes)
        order = np.argsort(slots, kind="stable")
        slots, indices, targets = slots[order], indices[order], targets[order]
        bounds = [0, *(np.flatnonzero(np.diff(slots)) + 1).tolist(), len(slots)]
        for start, stop in zip(bounds[:-1], bounds[1:], strict=True):
            history = self._histories[int(slots[start])]
            assert history is not None
            history.indices.frombytes(indices[start:stop].tobytes())
            history.y.frombytes(targets[start:stop].tobytes())

    def add(self, model: GLMEstimator, warm: np.ndarray) -> int:
        """Add an agent whose estimator was just reset on warm-start rows ``warm``.

        Agents with the same ridge strength and warm-start rows start in
        one state. Returns the agent's position.
        """
        match = next(
            (
                slot
                for l2, growth, rows, slot in self._starts
                if l2 == model.l2
                and growth == model.refit_growth
                and rows.shape == warm.shape
                and np.array_equal(rows, warm)
            ),
            None,
        )
        if match is None:
            match = self._free.pop()
            self._starts.append((model.l2, model.refit_growth, warm, match))
            self._load(match, model, warm)
        agent = self.n_agents
        self.n_agents += 1
        self.slot[agent] = match
        self.members[match] += 1
        return agent

    def _load(self, slot: int, model: GLMEstimator, warm: np.ndarray) -> None:
        """Copy a freshly reset estimator into ``slot``; log its warm-start rows."""
        self.A_inv[slot] = model.A_inv
        self.A[slot] = model.A
        self.beta[slot] = model.beta
        self.rls_beta[slot] = model._rls_beta
        self.xty[slot] = model.xty
        self.l2[slot] = model.l2
        self.refit_growth[slot] = model.refit_growth
        self.n[slot] = model.n
        self.n_in_A[slot] = model._n_in_A
        self.n_at_refit[slot] = model._n_at_refit
        self.refit_limit[slot] = (1.0 + self.refit_growth[slot]) * self.n_at_refit[slot]
        history = _History(None, 0)
        if model.n:
            start = self.log.append(warm)
            history.indices.extend(range(start, start + model.n))
            history.y.extend(model.y.tolist())
        self.history[slot] = history

    def update(
        self,
        agents: np.ndarray,
        revealed: np.ndarray,
        outcomes: np.ndarray,
        x: np.ndarray,
        first_index: np.ndarray,
    ) -> None:
        """Learn each agent's revealed rows.

        ``agents`` are this object's agent positions that revealed anything;
        ``revealed``/``outcomes``/``x`` are their rows (float64 features),
        ``first_index`` the log index of each one's batch.
        """
        # agents of one state that revealed the same rows (same outcomes) learn once
        keys = np.column_stack(
            [
                self.slot[agents],
                first_index,
                revealed.astype(np.int64),
                np.where(revealed, outcomes, 0.0).view(np.int64),
            ]
        )
        _, first, inverse, counts = np.unique(
            keys, axis=0, return_index=True, return_inverse=True, return_counts=True
        )
        inverse = inverse.reshape(-1)
        slots = self.slot[agents[first]]
        # a group that is only part of its state's agents moves to a copy; the
        # members are counted as groups leave, so the last group keeps the state
        for group in np.flatnonzero(counts < self.members[slots]).tolist():
            slot = int(slots[group])
            if counts[group] < self.members[slot]:
                slots[group] = self._split(slot, agents[inverse == group])
        if revealed.shape[1] == 1 and self.dim > 1:
            self._learn_rows(slots, x[first, 0], outcomes[first, 0], first_index[first])
            return
        for group, slot in enumerate(slots.tolist()):
            row = first[group]
            mask = revealed[row]
            indices = first_index[row] + np.flatnonzero(mask)
            self._learn(slot, x[row][mask], outcomes[row][mask], indices)

    def update_row(self, agents: np.ndarray, row: np.ndarray, target: float, index: int) -> None:
        """:meth:`update` when every agent in ``agents`` revealed one row ``row`` (log ``index``).

        The common case of a paper's grid (one stream, one applicant per step,
        the same outcome for everyone who approved): the agents of a state
        reveal alike or not at all, so grouping is a count per state.
        """
        slots_of = self.slot[agents]
        counts = np.bincount(slots_of, minlength=len(self.members))
        slots = counts.nonzero()[0]
        for position in (counts[slots] < self.members[slots]).nonzero()[0].tolist():
            # only some of the state's agents revealed: they move to a copy
            slot = int(slots[position])
            slots[position] = self._split(slot, agents[slots_of == slot])
        if self.dim == 1:
            for slot in slots.tolist():
                self._learn(slot, row[None, :], np.array([target]), np.array([index]))
            return
        count = len(slots)
        if self._stacked_gains:
            self._learn_one_row(slots, row, target, index)
            return
        self._learn_rows(
            slots, np.tile(row, (count, 1)), np.full(count, target), np.full(count, index)
        )

    def _learn_one_row(self, slots: np.ndarray, row: np.ndarray, target: float, index: int) -> None:
        """:meth:`_learn_rows` of the same row, outcome and log index for every state.

        The same operations on the same operands (a scalar broadcast where
        ``_learn_rows`` has a column of equal values), in fewer calls: the gains
        in one stacked ``matmul`` (each state's ``gemv``), the rank-one update in
        NumPy where that rounds as ``dger`` (``_batched``), else ``dger`` itself on
        each state (:func:`~agents.lending._fast.rank_one.rank_one_each`).
        """
        # the row joins the states' histories when they are next read (_flush)
        self._pending.append((index, target, slots))
        if self._kernel is not None:
            self._learn_one_row_compiled(slots, row, target)
            return
        self.xty[slots] += row * target
        rows = row[None, :].repeat(len(slots), axis=0)
        gathered = self.A_inv[slots]
        gains = np.matmul(gathered, rows[:, :, None])[:, :, 0]
        denominators = 1.0 + np.matmul(rows[:, None, :], gains[:, :, None])[:, 0, 0]
        if self._batched:
            gathered += ((-1.0 / denominators)[:, None] * gains)[:, :, None] * gains[:, None, :]
            self.A_inv[slots] = gathered
        else:
            # -1.0 / d element-wise is the Python float division _learn_rows hands dger
            rank_one_each(self.A_inv, slots, gains, -1.0 / denominators)
        gains /= denominators[:, None]
        rls = self.rls_beta[slots]
        predicted = np.matmul(rows[:, None, :], rls[:, :, None])[:, 0, 0]
        rls += gains * (target - predicted)[:, None]
        self._after_rows(slots, rls)

    def _learn_one_row_compiled(self, slots: np.ndarray, row: np.ndarray, target: float) -> None:
        """:meth:`_learn_one_row`'s arithmetic with its element-wise part in one compiled call.

        The products that go to BLAS (the gains, the denominators, the predictions)
        are NumPy's, as in :meth:`_learn_one_row`; the rest is
        :func:`~agents.lending._fast.rank_one.one_row_kernel`, state by state (tested
        equal, bit for bit).
        """
        assert self._kernel is not None
        # the states and the row, as both kernels take them first
        state = (self.A_inv, self.xty, self.rls_beta, self.beta, self.n, self.refit_limit)
        given = (*state, slots, np.ascontiguousarray(row), float(target))
        if self._blas_kernel is not None:
            refits = self._blas_kernel(*given, self._gains, self._batched)
            for slot in refits.tolist():
                self._refit(slot)
            return
        # the row broadcast across the stack: each state's gemv (and dot) on the same operands
        column = row[:, None]
        gains = np.matmul(self.A_inv[slots], column)[:, :, 0]
        denominators = 1.0 + np.matmul(row, gains[:, :, None])[:, 0]
        # the states' RLS predictions before this row (the rank-one update does not touch them)
        predicted = np.matmul(row, self.rls_beta[slots][:, :, None])[:, 0]
        gains = np.ascontiguousarray(gains)
        refits = self._kernel(*given, gains, denominators, predicted, self._batched)
        if refits.size:
            for slot in refits.tolist():
                self._refit(slot)

    def _learn_rows(
        self, slots: np.ndarray, rows: np.ndarray, targets: np.ndarray, indices: np.ndarray
    ) -> None:
        """:meth:`_learn` of one row per state (distinct ``slots``), batched across states.

        Every product is the one ``GLMEstimator.add_row`` computes (stacked
        ``matmul`` runs the same BLAS kernel per state; the rank-one update
        is ``dger`` per state), so the result is bit for bit the same.
        """
        for slot, index, target in zip(
            slots.tolist(), indices.tolist(), targets.tolist(), strict=True
        ):
            history = self.history[slot]
            assert history is not None
            history.indices.append(index)
            history.y.append(target)
        self.xty[slots] += rows * targets[:, None]
        A_inv = self.A_inv
        if self._batched:
            # the states' matrices gathered (small at this d), every product stacked: a
            # stacked matmul runs the same BLAS gemv per state, and the rank-one update
            # is dger's own arithmetic here (checked by _numpy_rank_one_is_dger)
            gathered = A_inv[slots]
            gains = np.matmul(gathered, rows[:, :, None])[:, :, 0]
            denominators = 1.0 + np.matmul(rows[:, None, :], gains[:, :, None])[:, 0, 0]
            scaled = (-1.0 / denominators)[:, None] * gains
            gathered += scaled[:, :, None] * gains[:, None, :]
            A_inv[slots] = gathered
        else:
            if self._stacked_gains:
                gains = np.matmul(A_inv[slots], rows[:, :, None])[:, :, 0]
            else:
                gains = np.empty_like(rows)
                for position, slot in enumerate(slots.tolist()):
                    # in place, no gathered copy of the states' matrices
                    np.matmul(A_inv[slot], rows[position], out=gains[position])
            denominators = 1.0 + np.matmul(rows[:, None, :], gains[:, :, None])[:, 0, 0]
            # _rank_one_update without its check, per state: A_inv[slot] is C-ordered
            # float64, so its transpose is the Fortran array dger updates in place
            rank_one_each(A_inv, slots, gains, -1.0 / denominators)
        gains /= denominators[:, None]
        rls = self.rls_beta[slots]
        predicted = np.matmul(rows[:, None, :], rls[:, :, None])[:, 0, 0]
        rls = rls + gains * (targets - predicted)[:, None]
        self._after_rows(slots, rls)

    def _after_rows(self, slots: np.ndarray, rls: np.ndarray) -> None:
        """Store the states' new RLS estimates; count the row; refit where the data grew."""
        self.rls_beta[slots] = rls
        n = self.n[slots] + 1
        self.n[slots] = n
        # GLMEstimator's test n > (1 + refit_growth) * n_at_refit, the product kept
        refit = n > self.refit_limit[slots]
        # every state's RLS estimate; a refit then sets its own (it does not read beta)
        self.beta[slots] = rls
        if refit.any():
            for slot in slots[refit].tolist():
                self._refit(slot)

    def _refit(self, slot: int) -> None:
        """``GLMEstimator._refit`` of the linear incremental solver, on state ``slot``."""
        A = self._fold(slot)
        self.beta[slot] = np.linalg.solve(A, self.xty[slot])
        self.A_inv[slot] = np.linalg.inv(A)
        self.rls_beta[slot] = self.beta[slot]
        self.n_at_refit[slot] = self.n[slot]
        self.refit_limit[slot] = (1.0 + self.refit_growth[slot]) * self.n_at_refit[slot]

    def _split(self, slot: int, members: np.ndarray) -> int:
        """Move ``members`` (agents in ``slot``) to a copy of it; return the copy's slot."""
        new = self._free.pop()
        for name in ("A_inv", "A", "beta", "rls_beta", "xty"):
            getattr(self, name)[new] = getattr(self, name)[slot]
        for name in ("l2", "refit_growth", "n", "n_in_A", "n_at_refit", "refit_limit"):
            getattr(self, name)[new] = getattr(self, name)[slot]
        self.history[new] = _History(self.history[slot], int(self.n[slot]))
        self.slot[members] = new
        self.members[slot] -= len(members)
        self.members[new] = len(members)
        return new

    def release(self, slot: int) -> None:
        """Return an empty state's slot to the free list."""
        self.history[slot] = None
        self._free.append(slot)

    def _learn(self, slot: int, x: np.ndarray, y: np.ndarray, indices: np.ndarray) -> None:
        """``GLMEstimator.add`` then ``fit`` on state ``slot``, with the same arithmetic."""
        history = self.history[slot]
        assert history is not None
        history.indices.extend(indices.tolist())
        history.y.extend(y.tolist())
        A_inv = self.A_inv[slot]
        if len(x) < self.dim:
            xty = self.xty[slot]
            rls_beta = self.rls_beta[slot]
            for row, target in zip(x, y.tolist(), strict=True):
                xty += row * target
                gain = _sherman_morrison(A_inv, row, 1.0)
                rls_beta = rls_beta + gain * (target - row @ rls_beta)
            self.rls_beta[slot] = rls_beta
            self.n[slot] += len(x)
        else:
            self.n[slot] += len(x)
            self.xty[slot] += x.T @ y
            A_inv[...] = np.linalg.inv(self._fold(slot))
            self.rls_beta[slot] = A_inv @ self.xty[slot]
        n = int(self.n[slot])
        if n > (1.0 + self.refit_growth[slot]) * self.n_at_refit[slot]:
            self._refit(slot)
        else:
            self.beta[slot] = self.rls_beta[slot]

    def _fold(self, slot: int) -> np.ndarray:
        """``GLMEstimator.A``: fold the rows revealed since ``A`` was last read, as one product."""
        n, done = int(self.n[slot]), int(self.n_in_A[slot])
        if done < n:
            history = self.history[slot]
            assert history is not None
            indices, _ = history.collect(n, done)
            new = self.log.rows(indices)
            self.A[slot] += new.T @ new
            self.n_in_A[slot] = n
        return self.A[slot]

    def widths(self, slot: int, x: np.ndarray) -> np.ndarray:
        """``GLMEstimator.widths`` of state ``slot``."""
        return np.sqrt(np.maximum(np.einsum("ij,ij->i", x @ self.A_inv[slot], x), 0.0))

    def view(self, agent: int) -> SharedModelView:
        """Return a read-only, estimator-like view of ``agent``'s current state."""
        return SharedModelView(self, agent)


class SharedModelView:
    """What an agent in :class:`SharedRLS` holds as ``model_``: its state, read on demand."""

    def __init__(self, shared: SharedRLS, agent: int) -> None:
        self._shared = shared
        self._agent = agent
        self.link = shared.link
        self.dim = shared.dim
        self.solver = "incremental"

    @property
    def _slot(self) -> int:
        return int(self._shared.slot[self._agent])

    @property
    def beta(self) -> np.ndarray:
        """``beta_hat``."""
        return self._shared.beta[self._slot]

    @property
    def A_inv(self) -> np.ndarray:
        """``A^{-1}``."""
        return self._shared.A_inv[self._slot]

    @property
    def A(self) -> np.ndarray:
        """``lambda I + sum x x^T`` of the revealed rows."""
        return self._shared._fold(self._slot)

    @property
    def l2(self) -> float:
        """Ridge strength."""
        return float(self._shared.l2[self._slot])

    @property
    def n(self) -> int:
        """Number of revealed examples."""
        return int(self._shared.n[self._slot])

    @property
    def X(self) -> np.ndarray:
        """The revealed features (float64, gathered from the log)."""
        history = self._shared.history[self._slot]
        assert history is not None
        return self._shared.log.rows(history.collect(self.n)[0])

    @property
    def y(self) -> np.ndarray:
        """The revealed outcomes."""
        history = self._shared.history[self._slot]
        assert history is not None
        return history.collect(self.n)[1].copy()

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Return ``mu(x . beta_hat)``."""
        return np.asarray(self.link.mean(x @ self.beta), dtype=float)

    def widths(self, x: np.ndarray) -> np.ndarray:
        """Return ``sqrt(x^T A^{-1} x)`` for each row of ``x``."""
        return self._shared.widths(self._slot, x)
