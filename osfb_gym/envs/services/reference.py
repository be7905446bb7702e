"""The evaluator's reference optimum of MultiServiceChoice, computed once per world.

Not part of the env: an acquisition step never needs it. The episode
metrics (:class:`~osfb_gym.envs.services.metrics.ServiceMetrics`) ask for
it when they are made with ``reference_restarts > 0`` and read the hidden
world from the last step's oracle; :func:`cached_reference_loss` then
solves each (world, k, restarts) once per process, so the episodes of
several agents on one world, or of one agent on a fixed world
(``world_seed``), share one solve.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import numpy as np

from osfb_gym.core.validation import check_int
from osfb_gym.envs.services.world import Population, learning_dynamics

#: reference solves kept per process (a float each)
CACHE_SIZE = 4096
_CACHE: OrderedDict[tuple[str, int, int, int, int], float] = OrderedDict()


def d2_seeding(population: Population, k: int, rng: np.random.Generator) -> np.ndarray:
    """Full-information AcQUIre: ``k`` preferences sampled by current loss (k-means++ seeding)."""
    first = int(rng.integers(population.n))
    chosen = [first]
    best = population.loss_at(population.preferences[first])
    floor = population.minimum_loss()
    for _ in range(1, k):
        excess = np.maximum(best - floor, 0.0)
        total = excess.sum()
        pick = (
            int(rng.integers(population.n))
            if total <= 0
            else int(rng.choice(population.n, p=excess / total))
        )
        chosen.append(pick)
        best = np.minimum(best, population.loss_at(population.preferences[pick]))
    return population.preferences[chosen].copy()


def reference_loss(
    population: Population,
    k: int,
    *,
    restarts: int = 10,
    max_rounds: int = 100,
    seed: int = 0,
) -> float:
    """Best total loss found for ``k`` services: an upper bound on the optimum ``L(Theta*)``.

    Squared family: scikit-learn's ``KMeans`` (Lloyd from k-means++ seeds,
    ``n_init=restarts``, ``sample_weight=w``), which is exactly this loss.
    Other families: Lloyd-style alternating minimisation (choose, refit)
    from ``restarts`` seeds drawn by full-information D^2 sampling. The
    ratio of an agent's loss to this value is a lower bound on its ratio to
    the true optimum. Exact in the sense of the paper for the squared and
    Mahalanobis families (closed-form refits); a local method for Huber and
    cosine.

    Examples
    --------
    >>> phi = np.array([[0.0], [0.1], [5.0], [5.2]])
    >>> pop = Population("squared", phi, np.ones(4), np.zeros(4, dtype=int))
    >>> round(reference_loss(pop, 2), 4)
    0.025
    """
    k = check_int(k, "k", minimum=1, maximum=population.n)
    restarts = check_int(restarts, "restarts", minimum=1)
    if population.family == "squared":
        from sklearn.cluster import KMeans

        model = KMeans(n_clusters=k, n_init=restarts, max_iter=max_rounds, random_state=seed)
        model.fit(population.preferences, sample_weight=population.weights)
        return float(population.loss_matrix(model.cluster_centers_).min(axis=1).sum())
    rng = np.random.default_rng(seed)
    best = np.inf
    for _ in range(restarts):
        services = d2_seeding(population, k, rng)
        _, _, losses = learning_dynamics(population, services, max_rounds)
        best = min(best, float(losses.sum()))
    return best


def fingerprint(population: Population) -> str:
    """Return a digest of everything that defines ``population``'s losses (not its object identity).

    Two worlds drawn from one ``world_seed`` have one fingerprint; so do a
    world and its copy.

    Examples
    --------
    >>> phi = np.array([[0.0], [1.0]])
    >>> a = Population("squared", phi, np.ones(2), np.zeros(2, dtype=int))
    >>> b = Population("squared", phi.copy(), np.ones(2), np.zeros(2, dtype=int))
    >>> fingerprint(a) == fingerprint(b), fingerprint(a) == fingerprint(a.take(np.array([1, 0])))
    (True, False)
    """
    digest = hashlib.blake2b(population.family.encode(), digest_size=20)
    for array in (
        population.preferences,
        population.weights,
        population.matrices,
        population.matrix_index,
        population.deltas,
        population.offsets,
    ):
        if array is None:
            digest.update(b"-")
        else:
            array = np.ascontiguousarray(array)
            digest.update(f"{array.dtype}{array.shape}".encode())
            digest.update(array.data)
    return digest.hexdigest()


def cached_reference_loss(
    population: Population, k: int, *, restarts: int, seed: int = 0, max_rounds: int = 100
) -> float:
    """:func:`reference_loss`, solved once per (world, ``k``, ``restarts``, ``seed``) per process.

    Examples
    --------
    >>> phi = np.array([[0.0], [0.1], [5.0], [5.2]])
    >>> pop = Population("squared", phi, np.ones(4), np.zeros(4, dtype=int))
    >>> first = cached_reference_loss(pop, 2, restarts=2)
    >>> first == cached_reference_loss(pop, 2, restarts=2) == reference_loss(pop, 2, restarts=2)
    True
    """
    key = (fingerprint(population), int(k), int(restarts), int(seed), int(max_rounds))
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    value = reference_loss(population, k, restarts=restarts, seed=seed, max_rounds=max_rounds)
    _CACHE[key] = value
    if len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return value
