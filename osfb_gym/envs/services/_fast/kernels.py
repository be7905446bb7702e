"""The loss kernels of a services world and the env's per-step loops, NumPy and compiled.

Every step of an episode evaluates every user's loss at the new service
(:meth:`~osfb_gym.envs.services.world.Population.loss_at`), updates each
user's best service and, for the oracle, averages the losses by group. At
100,000 users each NumPy call is a pass over 0.8 MB, and a step made of
about thirty of them took ~2-3 ms. Here:

- the NumPy kernels (``squared_loss``, ``cosine_loss``, ``huber_loss``,
  ``mahalanobis_loss``): the same floating-point operations as
  ``Population.loss_at_reference``, with per-world constants and in place
  (tested bit for bit);
- for ``d <= 2`` (the env's default dimension) the same operations in one
  compiled loop each (:mod:`osfb_gym.envs.services._fast.compiled`, numba, the
  optional ``fast`` extra), and the best-service update and the group
  sums as loops (:func:`update_best`, :func:`group_averages`).

The compiled loops are used for worlds of at least
:data:`COMPILED_MIN_USERS` users when numba is installed and the
environment variable ``OSFB_NUMBA`` is not ``0``; both paths give the
same bits (tested). Two loops reproduce a BLAS product: the Mahalanobis kernel's
``diff @ M`` (``dgemm``) and the cosine kernel's ``phi @ theta``
(``dgemv``), which OpenBLAS's kernels on this project's machines round
as one fused multiply-add per extra term; a BLAS that rounds otherwise
would round the reference otherwise too. So :func:`pick` checks each
world: the compiled kernel is taken only if it gives the NumPy kernel's
bytes at three of the world's own preferences (every user, every matrix);
else the world keeps the NumPy kernel.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from osfb_gym.core.optional import compiled
from osfb_gym.envs.services.distances import squared_distances as plain_squared_distances

if TYPE_CHECKING:
    from osfb_gym.envs.services.world import Population

Kernel = Callable[["Population", np.ndarray], np.ndarray]
#: ``settle(world, user, best, choice, t, minimum, excess, services)`` -> ``(reported,
#: reported as float32, choices, revealed, total, reported total)`` (:func:`settle`)
#: (the compiled ones take a ``view`` more: :func:`pick_settle`)
Settle = Callable[..., tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, float]]
#: the fewest users for which the compiled loops run in any process: importing numba
#: and loading the cached loops costs ~0.5 s of CPU once per process, more than a whole
#: episode saves below this; smaller worlds (the default 500 users, the tests) keep
#: the NumPy path and import nothing, unless numba is loaded already (an RL view's
#: writers load it): then the loops cost nothing to import and save most of a step
COMPILED_MIN_USERS = 10_000
INT, BOOL = np.dtype(np.int64), np.dtype(bool)
EMPTY32 = np.empty(0, np.float32)
#: the compiled settle's ``view`` argument when no view's vector is written: no squashed
#: losses (-1), no groups (-1), tables of the types a real layout has
NO_VIEW = (-1, EMPTY32, 1.0, -1, EMPTY32, 1.0, -1, -1)


def compiled_loops(
    n_users: int, module: str = "osfb_gym.envs.services._fast.compiled"
) -> ModuleType | None:
    """Return a module of compiled loops (the step's by default) for ``n_users`` users, or None.

    None without numba, with the environment variable ``OSFB_NUMBA=0``,
    or below :data:`COMPILED_MIN_USERS` users in a process that has not
    imported numba (the loops would cost more to load than they save).
    The reset's loops (``compiled_draws``) follow the same rule.
    """
    if n_users < COMPILED_MIN_USERS and not numba_loaded():
        return None
    return compiled(module)


def numba_loaded() -> bool:
    """Whether this process has imported numba (an RL view's writers do)."""
    return "numba" in sys.modules


# ------------------------------------------------------------------ NumPy kernels
def squared_distances(world: Population, theta: np.ndarray) -> np.ndarray:
    """``||phi_i - theta||^2`` for every user, from contiguous columns when ``d <= 2``.

    ``world.squared_distances``'s ``d <= 2`` lines, written out here: the
    same operations on the same values.
    """
    columns = world._columns
    d = columns.shape[0]
    if d > 2:
        return plain_squared_distances(world.preferences, theta)
    out = columns[0] - theta[0]
    out *= out
    if d == 2:
        second = columns[1] - theta[1]
        second *= second
        out += second
    return out


def squared_loss(world: Population, theta: np.ndarray) -> np.ndarray:
    """``w_i ||theta - phi_i||^2`` (``1.0 * x`` is ``x``: unit weights are skipped)."""
    distances = squared_distances(world, theta)
    return distances if world._unit_weights else world.weights * distances


def cosine_loss(world: Population, theta: np.ndarray) -> np.ndarray:
    """``w_i max(1 - <theta, phi_i> / (||theta|| ||phi_i||), 0)``."""
    out = world.preferences @ theta
    out /= np.linalg.norm(theta) * world._norms
    np.subtract(1.0, out, out=out)
    np.maximum(out, 0.0, out=out)
    out *= world.weights
    return out


def huber_loss(world: Population, theta: np.ndarray) -> np.ndarray:
    """``w_i H_{delta_i}(||theta - phi_i||)``."""
    assert world.deltas is not None
    r = squared_distances(world, theta)
    np.sqrt(r, out=r)
    out = 0.5 * r
    out *= r
    linear = r - world._half_deltas
    linear *= world.deltas
    np.copyto(out, linear, where=r > world.deltas)
    if not world._unit_weights:
        out *= world.weights
    return out


def mahalanobis_loss(world: Population, theta: np.ndarray) -> np.ndarray:
    """``w_i max((theta - phi_i)^T M_i (theta - phi_i), 0) + c_i``."""
    quad = quadratic_forms(world, theta)
    quad *= world.weights
    if world.offsets is not None:
        quad += world.offsets
    return quad


def quadratic_forms(world: Population, theta: np.ndarray) -> np.ndarray:
    """``max((theta - phi_i)^T M_i (theta - phi_i), 0)`` for every user, users by matrix.

    The same operations as ``loss_at_reference``: per matrix, the BLAS
    product ``diff @ M`` (its rounding is BLAS's own, so it stays
    BLAS's), then ``einsum("ni,ni->n", ...)``, which for ``d <= 2`` is
    ``0.0 + (p_0 q_0 + p_1 q_1)`` (the ``0.0 +`` only turns ``-0.0`` into
    ``+0.0``): written column by column here, without einsum's 2-element
    inner loops (tested bit for bit, a ``-0.0`` case included).
    """
    assert world.matrices is not None
    order, columns, spans = world._by_matrix
    d, n = columns.shape
    diff, product = world._workspace
    for j in range(d):
        np.subtract(columns[j], theta[j], out=diff[j])
    quad, out = np.empty(n), np.empty(n)
    if d > 2:
        # rows in C order, as the reference has them: einsum's summation over
        # longer rows may depend on their layout
        np.copyto(product, diff.T)
        for k, start, stop in spans:
            part = product[start:stop]
            quad[start:stop] = np.einsum("ni,ni->n", part @ world.matrices[k], part)
        np.maximum(quad, 0.0, out=quad)
    else:
        # (diff @ M)^T = M^T diff^T: each entry the same two products in the same
        # order (tested byte for byte), in rows that the next lines read contiguously
        for k, start, stop in spans:
            np.matmul(world.matrices[k].T, diff[:, start:stop], out=product[:, start:stop])
        np.multiply(product[0], diff[0], out=quad)
        if d == 2:
            quad += np.multiply(product[1], diff[1], out=out)  # out: scratch till the end
        quad += 0.0  # einsum's start: turns -0.0 into +0.0, before the same clip
        np.maximum(quad, 0.0, out=quad)
    # out[order] = quad, as a gather (the same values, each moved once)
    return np.take(quad, world._from_sorted, out=out)


# ------------------------------------------------------------------ compiled kernels
def _compiled_kernel(world: Population, loops: ModuleType) -> Kernel | None:
    """Return the family's compiled kernel for ``d <= 2`` (None where there is none).

    A closure over the world's arrays, not over the world (no cycle).
    """
    d = world.dim
    if d > 2:
        return None
    columns = world._columns
    c0, c1, two = columns[0], columns[d - 1], d == 2
    weights, unit = world.weights, world._unit_weights
    if world.family == "squared":
        return lambda _, theta: loops.squared(c0, c1, theta[0], theta[d - 1], two, weights, unit)
    if world.family == "huber":
        deltas, half = world.deltas, world._half_deltas
        return lambda _, theta: loops.huber(
            c0, c1, theta[0], theta[d - 1], two, deltas, half, weights, unit
        )
    if world.family == "cosine":
        phi, norms = np.ascontiguousarray(world.preferences), world._norms
        return lambda _, theta: loops.cosine(
            phi, theta[0], theta[d - 1], two, np.linalg.norm(theta), norms, weights
        )
    assert world.matrices is not None and world.matrix_index is not None
    matrices = np.ascontiguousarray(world.matrices, dtype=float).reshape(-1, d * d)
    # at most 64 matrices here (numpy_kernel): one byte per user's index, fewer bytes read
    index = world.matrix_index.astype(np.uint8)
    # a matrix with a single user: NumPy's own product, not BLAS's (see the loop)
    alone = np.bincount(index, minlength=matrices.shape[0]) == 1
    offsets = world.offsets if world.offsets is not None else weights
    has_offsets = world.offsets is not None
    return lambda _, theta: loops.mahalanobis(
        c0, c1, theta[0], theta[d - 1], two, index, matrices, alone, weights, offsets, has_offsets
    )


def numpy_kernel(world: Population) -> Kernel:
    """Return the family's NumPy kernel for every user."""
    if world.family == "squared":
        return squared_loss
    if world.family == "cosine":
        return cosine_loss
    if world.family == "huber":
        return huber_loss
    assert world.matrices is not None
    if world.matrices.shape[0] > 64:
        return type(world).loss_at_reference  # (Population's, read from the world handed in)
    return mahalanobis_loss


def pick(world: Population) -> Kernel:
    """Return the world's kernel: compiled where there is one (checked, below), else NumPy's.

    The cosine and Mahalanobis loops reproduce a BLAS product's rounding
    (module docstring); they are kept only if they give the NumPy
    kernel's bytes for every user at the world's first, middle and last
    preferences.
    """
    numpy = numpy_kernel(world)
    loops = compiled_loops(world.n)
    if loops is None or (world.family == "mahalanobis" and numpy is not mahalanobis_loss):
        return numpy
    kernel = _compiled_kernel(world, loops)
    if kernel is None:
        return numpy
    if world.family in ("cosine", "mahalanobis"):
        for theta in world.preferences[[0, world.n // 2, -1]]:
            theta = np.asarray(theta, dtype=float)
            if kernel(world, theta).tobytes() != numpy(world, theta).tobytes():
                return numpy
    return kernel


# ------------------------------------------------------------------ the env's step
def update_best(losses: np.ndarray, best: np.ndarray, choice: np.ndarray, t: int) -> None:
    """Each user takes service ``t`` where its loss there is lower: ``choice``, ``best`` in place.

    ``np.putmask(choice, losses < best, t)`` (a boolean-indexed assignment
    would gather the indices first) then ``np.minimum(best, losses,
    out=best)``; one compiled loop when numba is there (the same values,
    tested).
    """
    loops = compiled_loops(losses.size)
    if loops is not None:
        loops.update_best(losses, best, choice, t)
        return
    np.putmask(choice, losses < best, t)
    np.minimum(best, losses, out=best)


def settle(
    world: Population,
    user: int,
    best: np.ndarray,
    choice: np.ndarray,
    t: int,
    minimum: np.ndarray,
    excess: bool,
    services: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, float]:
    """Place service ``t`` at user ``user``'s preference: best services, reports, totals.

    The env's step after its checks, in NumPy's lines (the reference of the
    compiled :func:`pick_settle`): ``services[t]`` is the preference; the
    losses there; at ``t == 0`` each user's best loss is its loss there
    (written into ``best``) and every choice 0, else :func:`update_best`;
    then :func:`report`. Returns the reported losses (``float64`` and
    ``float32``), the choices, the mask of ``user``, the two totals.
    """
    theta = world.preferences[user]
    services[t] = theta
    losses = world.loss_at(theta)
    if t == 0:
        best[:] = losses
        choice[:] = 0
    else:
        update_best(losses, best, choice, t)
    reported, reported32, choices, total, reported_total = report(best, choice, minimum, excess)
    revealed = np.zeros(best.size, dtype=bool)
    revealed[user] = True
    return reported, reported32, choices, revealed, total, reported_total


def report(
    best: np.ndarray, choice: np.ndarray, minimum: np.ndarray, excess: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """Return what users report and the totals, NumPy's lines.

    Users report ``best``, or ``best - minimum`` with ``excess``: as a new
    ``float64`` and a new ``float32`` array, with a copy of the choices
    and the totals of ``best`` and of the reports (``np.add.reduce`` of
    each, ndarray.sum's own reduction).
    """
    total = float(np.add.reduce(best))
    reported = best - minimum if excess else best.copy()
    reported_total = float(np.add.reduce(reported)) if excess else total
    return reported, reported.astype(np.float32), choice.copy(), total, reported_total


def pick_settle(world: Population) -> Settle | None:
    """Return :func:`settle` in one compiled call for ``world``, or None for NumPy's lines.

    The squared loss for ``d <= 2`` (the env's default) is computed in the
    same loop (``compiled.settle_squared``); any other world computes its
    losses with its kernel (:meth:`Population.loss_at`, compiled or not)
    and settles them in one loop (``compiled.settle``). Both sum as
    ``np.add.reduce`` does (NumPy's pairwise summation, written out in
    ``compiled.pairwise_sum``); the same bits as :func:`settle` (tested).
    None where :func:`compiled_loops` is None.

    The compiled call takes one more argument, ``view``: ``(size, layout,
    (at, start, scale) of the count)`` of an RL plain view's vector
    (:meth:`MultiServiceChoiceEnv.step_encoded`), written in the same
    loop; it then returns that ``float32`` vector in place of the
    ``float32`` reports.
    """
    loops = compiled_loops(world.n)
    if loops is None:
        return None
    squared = world.family == "squared" and world.dim <= 2

    def settle(
        world: Population,
        user: int,
        best: np.ndarray,
        choice: np.ndarray,
        t: int,
        minimum: np.ndarray,
        excess: bool,
        services: np.ndarray,
        view: tuple[Any, ...] | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, float]:
        n = best.size
        reported, choices, revealed = np.empty(n), np.empty(n, INT), np.empty(n, BOOL)
        count = 0.0
        if view is None:
            reported32 = out = np.empty(n, np.float32)
            layout, vector = NO_VIEW, EMPTY32
        else:
            out, reported32, layout = np.empty(view[0], np.float32), EMPTY32, view[1]
            vector = out
            _, start, scale = view[2]  # the count of services after this step, coded
            count = (t + 1 - start) / scale
        # what both loops take after the service's inputs
        rest: tuple[Any, ...] = (best, choice, t, minimum, excess, services, reported, reported32)
        rest += (choices, revealed, vector, world.groups, layout, count)
        if squared:
            total, reported_total = loops.settle_squared(
                world.preferences, user, world.weights, *rest
            )
        else:
            theta = world.preferences[user]
            total, reported_total = loops.settle(world.loss_at(theta), user, theta, *rest)
        return reported, out, choices, revealed, total, reported_total

    return settle
