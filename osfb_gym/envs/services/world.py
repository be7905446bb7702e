"""The hidden world of MultiServiceChoice: loss families, user choice, refits, group scores.

The multi-service setting of "Initializing Services in Interactive ML
Systems for Diverse Users" (AcQUIre): user ``i`` has a hidden preference
``phi_i`` and a loss ``f_i(theta) >= 0`` minimised only at ``theta = phi_i``;
given services ``Theta`` each user takes ``argmin_{theta in Theta} f_i(theta)``
and the total loss is ``L(Theta) = sum_i min_theta f_i(theta)``.

A :class:`Population` holds every user's hidden truth as arrays and
evaluates the losses of all users at one service in one vectorised pass
(no Python loop over users). The families:

============  ======================================================  ==========================
family        ``f_i(theta)``                                          refit of a service
============  ======================================================  ==========================
squared       ``w_i ||theta - phi_i||^2``                             weighted mean
mahalanobis   ``w_i (theta - phi_i)^T M_i (theta - phi_i) + c_i``     ``(sum w M)^-1 sum w M phi``
huber         ``w_i H_{delta_i}(||theta - phi_i||)``                  IRLS (majorise-minimise)
cosine        ``w_i (1 - <theta, phi_i> / (||theta|| ||phi_i||))``    normalised weighted mean
============  ======================================================  ==========================

``M_i`` is one of a few shared symmetric positive-definite matrices,
``matrices[matrix_index[i]]``: per-user geometry at the memory of ``m``
matrices instead of ``n`` (an ``(n, d, d)`` float64 array is 200 MB at
``n = 100,000, d = 16``). The offset ``c_i`` is the irreducible loss of a
linear-predictor subpopulation (its OLS residual, Section 4); it is 0
elsewhere. Cosine preferences live on the unit sphere, where that family
has its unique minimiser.

The evaluator's reference optimum (Lloyd-style alternating minimisation
from seeded restarts) lives in :mod:`osfb_gym.envs.services.reference`,
beside the metrics that ask for it; agents never import either module:
they see reported losses only. (This module was
``osfb_gym.core.service_losses``; core no longer re-exports it, as core
imports no family.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields, replace
from functools import cached_property
from typing import Any

import numpy as np

from osfb_gym.core.validation import check_choice
from osfb_gym.envs.services._fast import kernels
from osfb_gym.envs.services.distances import squared_distances

FAMILIES = ("squared", "mahalanobis", "huber", "cosine")
HUBER_IRLS_STEPS = 10
GATHER_BLOCK = 4096  # users per block when per-user matrices are gathered


def huber(r: np.ndarray, delta: np.ndarray | float) -> np.ndarray:
    """Huber function of a non-negative error ``r``: ``r^2/2`` up to ``delta``, then linear.

    Examples
    --------
    >>> huber(np.array([0.5, 3.0]), 1.0).tolist()
    [0.125, 2.5]
    """
    return np.where(r <= delta, 0.5 * r * r, delta * (r - 0.5 * delta))


def check_spd(matrices: np.ndarray, name: str) -> np.ndarray:
    """Return ``matrices`` (shape ``(m, d, d)``) if each is symmetric positive definite.

    Examples
    --------
    >>> check_spd(np.array([[[1.0, 0.0], [0.0, -1.0]]]), "matrices")
    Traceback (most recent call last):
    ...
    ValueError: matrices[0] must be positive definite; its smallest eigenvalue is -1
    """
    matrices = np.asarray(matrices, dtype=float)
    if matrices.ndim != 3 or matrices.shape[1] != matrices.shape[2]:
        raise ValueError(f"{name} must have shape (m, d, d), got {matrices.shape}")
    if not np.isfinite(matrices).all():
        raise ValueError(f"{name} must be finite")
    if not np.allclose(matrices, np.swapaxes(matrices, 1, 2)):
        raise ValueError(f"{name} must be symmetric")
    smallest = np.linalg.eigvalsh(matrices)[:, 0]
    bad = np.flatnonzero(smallest <= 0)
    if bad.size:
        raise ValueError(
            f"{name}[{bad[0]}] must be positive definite; its smallest eigenvalue is "
            f"{smallest[bad[0]]:.3g}"
        )
    return matrices


# eq=False: equality compares the arrays (below), not tuples of them
@dataclass(frozen=True, eq=False)
class Population:
    """The hidden truth of a user population: preferences, loss geometries, groups.

    Attributes
    ----------
    family
        One of :data:`FAMILIES`.
    preferences
        ``phi``, shape ``(n, d)``.
    weights
        ``w_i > 0``, shape ``(n,)``: how strongly each user feels a miss.
    groups
        Demographic group of each user, ``int`` shape ``(n,)``.
    matrices
        Mahalanobis family: the shared SPD matrices ``(m, d, d)``.
    matrix_index
        Mahalanobis family: which matrix each user has, shape ``(n,)``.
    deltas
        Huber family: each user's threshold ``delta_i > 0``.
    offsets
        Mahalanobis family: each user's irreducible loss ``c_i >= 0``.
    sizes
        Number of people behind each user (1 for individuals; the sample
        count of a subpopulation). Public, not part of the loss.
    group_names
        A name per group id, when the groups have names (census).
    """

    family: str
    preferences: np.ndarray
    weights: np.ndarray
    groups: np.ndarray
    matrices: np.ndarray | None = None
    matrix_index: np.ndarray | None = None
    deltas: np.ndarray | None = None
    offsets: np.ndarray | None = None
    sizes: np.ndarray | None = None
    group_names: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        check_choice(self.family, "loss", FAMILIES)
        if self.family == "mahalanobis" and (self.matrices is None or self.matrix_index is None):
            raise ValueError("the mahalanobis family needs matrices and matrix_index")
        if self.matrices is not None:
            check_spd(self.matrices, "matrices")
        if not (self.weights > 0).all():
            raise ValueError("weights must be positive: a user must feel a miss")
        if self.family == "huber" and self.deltas is None:
            raise ValueError("the huber family needs deltas")

    @classmethod
    def drawn(
        cls,
        family: str,
        preferences: np.ndarray,
        weights: np.ndarray,
        groups: np.ndarray,
        **fields: Any,
    ) -> Population:
        """Return the population ``Population(family, ...)`` builds, without its checks.

        For the synthetic builders (a new world at every reset), whose draws
        meet the checks by construction: a family of :data:`FAMILIES` given
        literally, positive weights (ones, or ``exp`` of a small normal),
        a Huber world's deltas, SPD matrices (:func:`random_spd`'s). The
        same fields, equal to the checked construction (tested).
        """
        world = object.__new__(cls)
        values = dict(_FIELD_DEFAULTS)
        values.update(
            fields, family=family, preferences=preferences, weights=weights, groups=groups
        )
        if len(values) != len(_FIELD_DEFAULTS):
            unknown = sorted(set(values) - set(_FIELD_DEFAULTS))
            raise TypeError(f"Population has no field(s) {unknown}")
        world.__dict__.update(values)
        return world

    def __eq__(self, other: object) -> bool:
        """Whether ``other`` is a population with the same values (arrays compared by value)."""
        if not isinstance(other, Population):
            return NotImplemented
        for name in self.__dataclass_fields__:
            mine, theirs = getattr(self, name), getattr(other, name)
            if isinstance(mine, np.ndarray) or isinstance(theirs, np.ndarray):
                if mine is None or theirs is None or not np.array_equal(mine, theirs):
                    return False
            elif mine != theirs:
                return False
        return True

    __hash__ = None  # type: ignore[assignment]  # mutable arrays inside: not hashable

    def __getstate__(self) -> dict[str, Any]:
        """Return the fields alone: per-world constants and the kernel are made again on use."""
        cached = {
            name for name, value in vars(Population).items() if isinstance(value, cached_property)
        }
        return {key: value for key, value in self.__dict__.items() if key not in cached}

    @property
    def n(self) -> int:
        """Number of users."""
        return int(self.preferences.shape[0])

    @property
    def dim(self) -> int:
        """Dimension ``d`` of preferences and services."""
        return int(self.preferences.shape[1])

    @cached_property
    def n_groups(self) -> int:
        """Number of groups (the largest id plus one); computed once per world."""
        return int(self.groups.max()) + 1

    # ------------------------------------------------------------------ losses
    def _blocks(self) -> list[tuple[int, np.ndarray]]:
        """Users by matrix: ``(matrix id, user indices)``; computed per call, cheap."""
        assert self.matrix_index is not None
        order = np.argsort(self.matrix_index, kind="stable")
        ids, starts = np.unique(self.matrix_index[order], return_index=True)
        return list(zip(ids.tolist(), np.split(order, starts[1:]), strict=True))

    # Per-world constants of the loss kernels, computed on first use and kept
    # (the arrays of a population are never changed in place; ``take`` and
    # ``rotated`` make new populations): every step evaluates every user's loss.
    @cached_property
    def _norms(self) -> np.ndarray:
        """``||phi_i||`` (cosine)."""
        return np.linalg.norm(self.preferences, axis=1)

    @cached_property
    def _half_deltas(self) -> np.ndarray:
        """``delta_i / 2`` (Huber)."""
        assert self.deltas is not None
        return 0.5 * self.deltas

    @cached_property
    def _columns(self) -> np.ndarray:
        """The preferences as ``(d, n)``, a contiguous row per coordinate (squared, Huber)."""
        return np.ascontiguousarray(self.preferences.T)

    @cached_property
    def _unit_weights(self) -> bool:
        """Whether every weight is 1.0 (squared and Huber worlds): ``1.0 * x`` is ``x``."""
        return bool((self.weights == 1.0).all())

    @cached_property
    def _by_matrix(self) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int, int]]]:
        """Users sorted by matrix (stable), their preferences, and ``(matrix, start, stop)``.

        The preferences are ``(d, n)``, one contiguous row per coordinate:
        the kernel subtracts ``theta`` coordinate by coordinate (a
        broadcast over an ``(n, 2)`` array runs its inner loop 2 elements
        at a time).
        """
        assert self.matrix_index is not None
        order = np.argsort(self.matrix_index, kind="stable")
        ids, starts = np.unique(self.matrix_index[order], return_index=True)
        stops = [*starts[1:].tolist(), order.size]
        spans = list(zip(ids.tolist(), starts.tolist(), stops, strict=True))
        return order, np.ascontiguousarray(self.preferences[order].T), spans

    @cached_property
    def _from_sorted(self) -> np.ndarray:
        """``order``'s inverse: ``sorted[inverse]`` equals ``out[order] = sorted``, gathered."""
        order = self._by_matrix[0]
        inverse = np.empty(order.size, dtype=np.intp)
        inverse[order] = np.arange(order.size)
        return inverse

    @cached_property
    def _workspace(self) -> tuple[np.ndarray, np.ndarray]:
        """Scratch arrays of the Mahalanobis kernel (two of ``d x n``), reused at each call.

        At 100,000 users they are 1.6 MB each: allocated afresh at every
        call, the allocator maps them anew and each call pays ~800 page
        faults (3x the kernel's arithmetic). The kernel only writes them
        before reading, and no call of it can interleave with another's in
        one thread; a population is stepped by one thread.
        """
        n, d = self.preferences.shape
        # d <= 2: the products transposed, (d, n); else the differences as rows, (n, d)
        return np.empty((d, n)), np.empty((d, n) if d <= 2 else (n, d))

    def loss_at(self, theta: np.ndarray, users: np.ndarray | None = None) -> np.ndarray:
        """Return ``f_i(theta)`` for every user (or the ``users`` given), vectorised.

        For every user (``users=None``, each step of an episode) the
        family's kernel (:mod:`osfb_gym.envs.services._fast.kernels`), picked
        once per world, reuses per-world constants and works in place, or
        in one compiled loop; the kernels compute the same floating-point
        operations as :meth:`loss_at_reference`, so the two agree bit for
        bit (tested).
        """
        if users is not None:
            return self.loss_at_reference(theta, users)
        return self._kernel(self, np.asarray(theta, dtype=float))

    @cached_property
    def _kernel(self) -> Callable[[Population, np.ndarray], np.ndarray]:
        """The family's kernel for every user, picked once per world (:func:`kernels.pick`)."""
        return kernels.pick(self)

    @cached_property
    def _settle(self) -> kernels.Settle:
        """The env's step after its service, picked once per world (:func:`kernels.pick_settle`).

        One compiled call where :func:`kernels.compiled_loops` allows,
        else :func:`kernels.settle`'s NumPy lines; the same values.
        """
        return kernels.pick_settle(self) or kernels.settle

    def loss_at_reference(self, theta: np.ndarray, users: np.ndarray | None = None) -> np.ndarray:
        """:meth:`loss_at` written plainly, one expression per family: the reference path."""
        theta = np.asarray(theta, dtype=float)
        phi = self.preferences if users is None else self.preferences[users]
        w = self.weights if users is None else self.weights[users]
        if self.family == "cosine":
            norm = np.linalg.norm(theta) * np.linalg.norm(phi, axis=1)
            return w * np.maximum(1.0 - (phi @ theta) / norm, 0.0)
        if self.family == "squared":
            return w * squared_distances(phi, theta)
        if self.family == "huber":
            assert self.deltas is not None
            deltas = self.deltas if users is None else self.deltas[users]
            return w * huber(np.sqrt(squared_distances(phi, theta)), deltas)
        diff = phi - theta
        assert self.matrices is not None and self.matrix_index is not None
        index = self.matrix_index if users is None else self.matrix_index[users]
        quad = np.empty(diff.shape[0])
        if self.matrices.shape[0] > 64:
            # one matrix per subpopulation: gather them, a block of users at a time so
            # the gathered (block, d, d) copy stays small whatever n is
            for start in range(0, diff.shape[0], GATHER_BLOCK):
                block = slice(start, start + GATHER_BLOCK)
                quad[block] = np.einsum(
                    "ni,nij,nj->n", diff[block], self.matrices[index[block]], diff[block]
                )
        else:
            for k, matrix in enumerate(self.matrices):
                rows = np.flatnonzero(index == k)
                if rows.size:
                    part = diff[rows]
                    quad[rows] = np.einsum("ni,ni->n", part @ matrix, part)
        loss = w * np.maximum(quad, 0.0)
        if self.offsets is not None:
            loss += self.offsets if users is None else self.offsets[users]
        return loss

    def loss_matrix(self, services: np.ndarray) -> np.ndarray:
        """Return ``f_i(theta_s)`` as an ``(n, k)`` array (a loop over services, not users)."""
        services = np.atleast_2d(np.asarray(services, dtype=float))
        return np.stack([self.loss_at(theta) for theta in services], axis=1)

    def minimum_loss(self) -> np.ndarray:
        """``f_i(phi_i)``: 0, or the offset of a linear-predictor subpopulation."""
        return np.zeros(self.n) if self.offsets is None else self.offsets.copy()

    # ------------------------------------------------------------------ refits
    def refit(self, services: np.ndarray, assignment: np.ndarray) -> np.ndarray:
        """Move each service to (towards) the minimiser of its users' total loss.

        Exact for the squared, Mahalanobis and cosine families; for Huber,
        :data:`HUBER_IRLS_STEPS` majorise-minimise steps from the current
        service, each of which can only lower the service's loss. A service
        nobody chose stays where it is. So a refit never raises the total
        loss of a fixed assignment.
        """
        services = np.array(services, dtype=float)
        k = services.shape[0]
        phi, w = self.preferences, self.weights
        counts = np.bincount(assignment, minlength=k)
        used = counts > 0
        if self.family in ("squared", "cosine"):
            sums = np.zeros_like(services)
            np.add.at(sums, assignment, w[:, None] * phi)
            if self.family == "squared":
                total = np.bincount(assignment, weights=w, minlength=k)
                services[used] = sums[used] / total[used, None]
            else:
                norms = np.linalg.norm(sums, axis=1)
                ok = used & (norms > 0)
                services[ok] = sums[ok] / norms[ok, None]
            return services
        if self.family == "huber":
            assert self.deltas is not None
            for _ in range(HUBER_IRLS_STEPS):
                r = np.linalg.norm(phi - services[assignment], axis=1)
                omega = w * np.minimum(1.0, self.deltas / np.maximum(r, 1e-300))
                sums = np.zeros_like(services)
                np.add.at(sums, assignment, omega[:, None] * phi)
                total = np.bincount(assignment, weights=omega, minlength=k)
                services[used] = sums[used] / total[used, None]
            return services
        assert self.matrices is not None and self.matrix_index is not None
        m = self.matrices.shape[0]
        # A_s = sum_i w_i M_i, b_s = sum_i w_i M_i phi_i over the users of s
        weight_sm = np.bincount(assignment * m + self.matrix_index, weights=w, minlength=k * m)
        a = np.einsum("sm,mij->sij", weight_sm.reshape(k, m), self.matrices)
        weighted_phi = np.zeros((k * m, self.dim))
        np.add.at(weighted_phi, assignment * m + self.matrix_index, w[:, None] * phi)
        b = np.einsum("mij,smj->si", self.matrices, weighted_phi.reshape(k, m, self.dim))
        services[used] = np.linalg.solve(a[used], b[used][..., None])[..., 0]
        return services

    def take(self, users: np.ndarray) -> Population:
        """Return the population of ``users`` (an index array), in that order."""

        def pick(array: np.ndarray | None) -> np.ndarray | None:
            return None if array is None else array[users]

        return replace(
            self,
            preferences=self.preferences[users],
            weights=self.weights[users],
            groups=self.groups[users],
            matrix_index=pick(self.matrix_index),
            deltas=pick(self.deltas),
            offsets=pick(self.offsets),
            sizes=pick(self.sizes),
        )

    def rotated(self, rotation: np.ndarray) -> Population:
        """Return the population seen through an orthogonal map ``Q``: ``phi -> Q phi``.

        ``M -> Q M Q^T`` keeps every loss at every correspondingly rotated
        service: the probe the no-leak tests use.
        """
        q = np.asarray(rotation, dtype=float)
        matrices = None if self.matrices is None else q @ self.matrices @ q.T
        return replace(self, preferences=self.preferences @ q.T, matrices=matrices)


#: every field of :class:`Population` with its default (None for the required ones)
_FIELD_DEFAULTS: dict[str, Any] = {
    field.name: None if field.default is MISSING else field.default for field in fields(Population)
}


def choose(losses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each user's chosen service (lowest loss, ties to the first) and its loss.

    Examples
    --------
    >>> choice, loss = choose(np.array([[2.0, 1.0], [0.5, 0.5]]))
    >>> choice.tolist(), loss.tolist()
    ([1, 0], [1.0, 0.5])
    """
    choice = np.argmin(losses, axis=1)
    return choice, np.take_along_axis(losses, choice[:, None], axis=1)[:, 0]


def group_losses(
    losses: np.ndarray, groups: np.ndarray, n_groups: int, counts: np.ndarray | None = None
) -> np.ndarray:
    """Average loss of each group (NaN for an empty group); ``counts``: the group sizes, if known.

    Examples
    --------
    >>> group_losses(np.array([1.0, 3.0, 5.0]), np.array([0, 0, 1]), 2).tolist()
    [2.0, 5.0]
    """
    if counts is None:
        counts = np.bincount(groups, minlength=n_groups)
    sums = np.bincount(groups, weights=losses, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


class GroupAverages:
    """:func:`group_losses` for one fixed ``groups`` array, its constants computed once.

    An env scores every step's losses by group; the group sizes, the
    divisor and the empty groups are the world's. The same operations as
    :func:`group_losses` (one weighted ``bincount``, one division), so the
    same values bit for bit (tested); with the compiled loops
    (:func:`kernels.compiled_loops`), each group's sum is added in the
    same order from the world's users listed group by group, without
    ``bincount``'s dependent stores.

    Examples
    --------
    >>> averages = GroupAverages(np.array([0, 0, 2]), 3)
    >>> averages(np.array([1.0, 3.0, 5.0])).tolist()
    [2.0, nan, 5.0]
    >>> averages.worst(averages(np.array([1.0, 3.0, 5.0])))
    5.0
    """

    def __init__(self, groups: np.ndarray, n_groups: int) -> None:
        self.groups, self.n_groups = groups, n_groups
        counts = np.bincount(groups, minlength=n_groups)
        self.counts = counts
        self._empty = np.flatnonzero(counts == 0)
        # group_losses divides by np.maximum(counts, 1): the same int64 -> float64 values
        self._divisor = counts.astype(np.float64)
        self._divisor[self._empty] = 1.0
        self._loops = kernels.compiled_loops(groups.size)
        if self._loops is not None:
            # each group's users in ascending order, group after group (int32: fewer
            # bytes read at each step)
            small = groups.size < 2**31
            self._order = np.argsort(groups, kind="stable").astype(np.int32 if small else np.intp)
            self._starts = np.concatenate([[0], np.cumsum(counts)])

    def __getstate__(self) -> dict[str, Any]:
        """Return the fields, with whether the loops ran instead of their module (no pickle)."""
        return {**self.__dict__, "_loops": self._loops is not None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore the fields; the loops again where they ran and still can (the same values)."""
        compiled = state.pop("_loops")
        self.__dict__.update(state)
        self._loops = kernels.compiled_loops(self.groups.size) if compiled else None

    def __call__(self, losses: np.ndarray) -> np.ndarray:
        """Return the average loss of each group (NaN for an empty one)."""
        if self._loops is not None and losses.dtype == np.float64:
            out = np.empty(self._starts.size - 1)
            return self._loops.group_averages(  # type: ignore[no-any-return]
                losses, self._order, self._starts, self._divisor, out
            )
        sums = np.bincount(self.groups, weights=losses, minlength=self.n_groups)
        np.divide(sums, self._divisor, out=sums)
        if self._empty.size:
            sums[self._empty] = np.nan
        return sums

    @staticmethod
    def worst(averages: np.ndarray) -> float:
        """Return ``nanmax(averages)``, the fairness objective (3), without nanmax's passes."""
        worst = np.maximum.reduce(averages)  # ndarray.max's own reduction
        return float(np.nanmax(averages) if worst != worst else worst)


def fairness_objective(losses: np.ndarray, groups: np.ndarray, n_groups: int) -> float:
    """Max over groups of the group's average loss, equation (3) of the paper."""
    return float(np.nanmax(group_losses(losses, groups, n_groups)))


def learning_dynamics(
    population: Population, services: np.ndarray, rounds: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run ``rounds`` of (users re-choose, services refit); return services, choice, losses.

    Each half-step can only lower the total loss (choice by argmin; refit
    by :meth:`Population.refit`), so the total never increases. Stops
    early once the assignment is stable.
    """
    services = np.array(services, dtype=float)
    choice, losses = choose(population.loss_matrix(services))
    for _ in range(rounds):
        services = population.refit(services, choice)
        new_choice, losses = choose(population.loss_matrix(services))
        stable = np.array_equal(new_choice, choice)
        choice = new_choice
        if stable and population.family != "huber":
            break
    return services, choice, losses
