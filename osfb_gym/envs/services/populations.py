"""User populations of MultiServiceChoice: synthetic clusters, linear predictors, census-like.

Each builder returns a :class:`~osfb_gym.envs.services.world.Population`
drawn from the generator it is given (the world's), so a world is fixed by
its seed alone.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from types import ModuleType
from typing import cast

import numpy as np

from osfb_gym.envs.services._fast.kernels import compiled_loops
from osfb_gym.envs.services.world import Population

CENTRE_SPREAD = 4.0  # cluster centres ~ N(0, 4^2 I)
SPREAD_RANGE = (0.3, 1.0)  # within-cluster standard deviation, per cluster
EIGEN_LOG_RANGE = 1.5  # Mahalanobis eigenvalues in exp([-1.5, 1.5]): condition up to ~20
WEIGHT_LOG_STD = 0.5  # per-user weights, lognormal
HUBER_DELTA_RANGE = (0.25, 2.0)  # Huber thresholds, per cluster
COSINE_SPREAD_RANGE = (0.1, 0.4)
LINEAR_NOISE_STD = 0.5  # score noise of the linear-predictor subpopulations
CENSUS_GROUP_COLUMNS = ("sex", "race")
#: the census population's groups: sex x race (10), or sex or race alone (the paper's two)
CENSUS_GROUPINGS = ("sex_race", "sex", "race")
CENSUS_SPLIT_COLUMN = "occupation"
CENSUS_SCORE = "hours-per-week"


def compiled_draws(n_users: int = 0) -> ModuleType | None:
    """Return the compiled loops between a world's draws, or None for NumPy's lines.

    None without numba, with ``OSFB_NUMBA=0``, or below
    :data:`~osfb_gym.envs.services._fast.kernels.COMPILED_MIN_USERS` users in a
    process that has not imported numba (an RL view's writers import it):
    a small world alone is not worth numba's import (~0.5 s, ~100 MB). The
    same bits either way.
    """
    return compiled_loops(n_users, "osfb_gym.envs.services._fast.compiled_draws")


def random_spd(m: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """Draw ``m`` random SPD matrices: random rotations, eigenvalues ``exp(U[-1.5, 1.5])``."""
    rotations = np.linalg.qr(rng.standard_normal((m, d, d)))[0]
    eigen = np.exp(rng.uniform(-EIGEN_LOG_RANGE, EIGEN_LOG_RANGE, (m, d)))
    matrices = np.einsum("mij,mj,mkj->mik", rotations, eigen, rotations)
    return 0.5 * (matrices + np.swapaxes(matrices, 1, 2))


def dirichlet_ones(k: int, rng: np.random.Generator) -> np.ndarray:
    """``rng.dirichlet(np.ones(k))``'s own draw, without its checks of the concentrations.

    For concentrations of 1 numpy's ``dirichlet`` draws ``k`` standard
    gammas of shape 1, which are its standard exponentials, sums them in
    order and multiplies each by the sum's inverse: so do these lines (the
    cumulative sum's last entry is that ordered sum). The same shares and
    the same generator state after (tested).
    """
    draws = rng.standard_exponential(k)
    draws *= 1.0 / draws.cumsum()[-1]
    return draws


@functools.lru_cache(maxsize=16)
def _arange(k: int) -> np.ndarray:
    """``np.arange(k)``, read-only, made once per size."""
    values = np.arange(k)
    values.setflags(write=False)
    return values


def cluster_labels(
    n: int, n_clusters: int, rng: np.random.Generator, loops: ModuleType | None | bool = True
) -> np.ndarray:
    """Assign ``n`` users to clusters of unequal sizes (Dirichlet(1) shares), each non-empty.

    The draw is ``rng.choice(n_clusters, n - n_clusters, p=shares)``'s own
    (a cumulative sum and a search of ``rng.random``), without its checks
    of ``p``, which cost more than the draw at the default sizes: the same
    labels and the same generator state after (tested). With numba the
    arithmetic between the draws is one compiled loop, the same bits
    (``loops``: :func:`compiled_draws`, looked up when True; None: NumPy's lines).
    """
    if loops is True:
        loops = compiled_draws(n)
    if isinstance(loops, ModuleType):
        draws = rng.standard_exponential(n_clusters)
        labels = np.empty(n, dtype=np.int64)
        loops.labels(draws, rng.random(n - n_clusters), labels)
    else:
        shares = dirichlet_ones(n_clusters, rng)
        cdf = shares.cumsum()
        cdf /= cdf[-1]
        drawn = cdf.searchsorted(rng.random(n - n_clusters), side="right")
        labels = np.concatenate((_arange(n_clusters), drawn))
    # permutation's own shuffle (the same draws), on this new array rather than a copy
    rng.shuffle(labels)
    return labels


@functools.lru_cache(maxsize=16)
def _ones(n: int) -> np.ndarray:
    """``np.ones(n)``, read-only, made once per size: the unit weights of drawn worlds.

    Worlds share it (a population's arrays are never written in place;
    read-only, a write would raise).
    """
    values = np.ones(n)
    values.setflags(write=False)
    return values


@functools.lru_cache(maxsize=16)
def _home_groups(n_clusters: int, n_groups: int) -> np.ndarray:
    """``arange(n_clusters) % n_groups``, read-only, made once per pair of sizes."""
    groups = np.arange(n_clusters) % n_groups
    groups.setflags(write=False)
    return groups


def draw_groups(
    labels: np.ndarray,
    n_groups: int,
    correlation: float,
    rng: np.random.Generator,
    n_clusters: int | None = None,
    loops: ModuleType | None | bool = True,
) -> np.ndarray:
    """Draw groups: each cluster has a home group, a user takes it with chance ``correlation``.

    Otherwise the group is uniform, so ``correlation=0`` makes groups
    independent of preferences and ``1`` makes each cluster one group.
    ``n_clusters`` is ``labels.max() + 1`` (computed when None); the
    world builders pass it, as :func:`cluster_labels` uses every cluster;
    ``loops`` as there.
    """
    if n_clusters is None:
        n_clusters = int(labels.max()) + 1
    # permutation's own steps for a 1-d array (a copy, shuffled), without its checks
    home = _home_groups(n_clusters, n_groups).copy()
    rng.shuffle(home)
    other = rng.integers(0, n_groups, labels.size)
    uniforms = rng.random(labels.size)
    if loops is True:
        loops = compiled_draws(labels.size)
    if isinstance(loops, ModuleType):
        loops.groups(labels, home, other, uniforms, float(correlation))
        return other
    # take: the same gather as [labels], cheaper; int64 (numpy's default integers)
    return np.where(uniforms < correlation, home.take(labels), other)


def _place(
    centres: np.ndarray,
    spreads: np.ndarray,
    labels: np.ndarray,
    normals: np.ndarray,
    loops: ModuleType | None,
) -> np.ndarray:
    """``CENTRE_SPREAD * centres[labels] + spreads[labels][:, None] * normals``, in ``normals``.

    ``table.take(labels, axis=0)`` gathers as ``table[labels]`` does (the
    same values), several times cheaper; ``z *= spread; z += centre`` is
    ``centre + spread * z`` operation for operation (the order of a sum's
    two terms does not change it). With numba, one compiled loop, the same
    bits (``loops``: :func:`compiled_draws`; None: NumPy's lines).
    """
    if loops is not None:
        loops.place(normals, spreads, centres, CENTRE_SPREAD, labels)
        return normals
    centres *= CENTRE_SPREAD
    normals *= spreads.take(labels)[:, None]
    normals += centres.take(labels, axis=0)
    return normals


def _loners(n: int, fraction: float, rng: np.random.Generator) -> np.ndarray | None:
    """Pick ``floor(fraction * n)`` users at random to be outliers; None if none.

    Drawing none uses no random numbers (``choice`` of 0 users, ``uniform``
    of shape ``(0, d)``): skipping both keeps the generator's stream.
    """
    count = int(fraction * n)
    return rng.choice(n, count, replace=False) if count else None


def draw_clusters(
    n: int,
    dim: int,
    loss: str,
    n_clusters: int,
    n_groups: int,
    group_correlation: float,
    rng: np.random.Generator,
    outlier_fraction: float = 0.0,
) -> Population:
    """Draw preference clusters with heterogeneous loss geometries.

    Models a user base made of a few taste communities of very unequal
    sizes (Dirichlet(1) shares): centres ``N(0, 4^2 I)``, each cluster its
    own spread in [0.3, 1]. Per family: squared, plain; Mahalanobis, one
    random SPD matrix per cluster (condition number up to about 20) and a
    lognormal weight per user; Huber, a threshold per cluster in
    [0.25, 2]; cosine, unit-norm preferences around random directions
    (angular spread 0.1 to 0.4 per cluster) and lognormal weights.

    ``outlier_fraction`` of the users (rounded down) are loners: their
    preference is uniform in the box ``[-12, 12]^d`` (three times the
    centres' spread), or uniform on the sphere for cosine; the geometry of
    each keeps its cluster's.
    """
    loops = compiled_draws(n)  # looked up once a world
    labels = cluster_labels(n, n_clusters, rng, loops)
    groups = draw_groups(labels, n_groups, group_correlation, rng, n_clusters, loops)
    # ``table.take(labels, axis=0)``: the gather of ``table[labels]``, cheaper; ``z *=
    # spread; z += centre`` is ``centre + spread * z`` operation for operation
    if loss == "cosine":
        centres = rng.standard_normal((n_clusters, dim))
        centres /= np.linalg.norm(centres, axis=1, keepdims=True)
        spread = rng.uniform(*COSINE_SPREAD_RANGE, n_clusters).take(labels)
        phi = rng.standard_normal((n, dim))
        phi *= spread[:, None]
        phi += centres.take(labels, axis=0)
        loners = _loners(n, outlier_fraction, rng)
        if loners is not None:
            phi[loners] = rng.standard_normal((loners.size, dim))
        phi /= np.linalg.norm(phi, axis=1, keepdims=True)
        weights = np.exp(WEIGHT_LOG_STD * rng.standard_normal(n))
        return Population.drawn("cosine", phi, weights, groups)
    centres = rng.standard_normal((n_clusters, dim))
    spreads = rng.uniform(*SPREAD_RANGE, n_clusters)
    phi = _place(centres, spreads, labels, rng.standard_normal((n, dim)), loops)
    loners = _loners(n, outlier_fraction, rng)
    if loners is not None:
        bound = 3 * CENTRE_SPREAD
        phi[loners] = rng.uniform(-bound, bound, (loners.size, dim))
    if loss == "squared":
        return Population.drawn("squared", phi, _ones(n), groups)
    if loss == "huber":
        deltas = rng.uniform(*HUBER_DELTA_RANGE, n_clusters).take(labels)
        return Population.drawn("huber", phi, _ones(n), groups, deltas=deltas)
    weights = np.exp(WEIGHT_LOG_STD * rng.standard_normal(n))
    matrices = random_spd(n_clusters, dim, rng)
    return Population.drawn(
        "mahalanobis", phi, weights, groups, matrices=matrices, matrix_index=labels
    )


def linear_population(
    X: np.ndarray, y: np.ndarray, members: np.ndarray, groups: np.ndarray
) -> Population:
    """Subpopulations of linear predictors from their samples (Section 4 of the paper).

    Subpopulation ``j`` holds rows ``members == j``. A service ``theta`` costs
    it the empirical squared error ``(1/n_j) ||X_j theta - y_j||^2
    = (theta - phi_j)^T S_j (theta - phi_j) + c_j`` with ``S_j = X_j^T X_j / n_j``,
    ``phi_j`` its OLS fit and ``c_j`` its residual: a Mahalanobis loss with
    one matrix per subpopulation and an offset. Acquiring it means fitting
    OLS on its samples, which puts the service at ``phi_j``.
    """
    m, d = int(members.max()) + 1, X.shape[1]
    gram = np.zeros((m, d, d))
    np.add.at(gram, members, np.einsum("ni,nj->nij", X, X))
    moment = np.zeros((m, d))
    np.add.at(moment, members, X * y[:, None])
    sizes = np.bincount(members, minlength=m).astype(float)
    scores_sq = np.bincount(members, weights=y * y, minlength=m)
    phi = np.linalg.solve(gram, moment[..., None])[..., 0]
    residual = (scores_sq - np.einsum("md,md->m", phi, moment)) / sizes
    matrices = gram / sizes[:, None, None]
    matrices = 0.5 * (matrices + np.swapaxes(matrices, 1, 2))
    return Population(
        "mahalanobis",
        phi,
        np.ones(m),
        groups,
        matrices=matrices,
        matrix_index=np.arange(m),
        offsets=np.maximum(residual, 0.0),
        sizes=sizes,
    )


def draw_linear(
    n: int,
    dim: int,
    samples: int,
    n_clusters: int,
    n_groups: int,
    group_correlation: float,
    rng: np.random.Generator,
) -> Population:
    """Draw ``n`` subpopulations of ``samples`` users each, scores linear in private features.

    True regressors cluster like :func:`draw_clusters` (squared family);
    features are ``N(0, Sigma_c)`` with one random SPD ``Sigma_c`` per
    cluster, scores ``x^T phi* + N(0, 0.5^2)``.
    """
    loops = compiled_draws(n)  # looked up once a world
    labels = cluster_labels(n, n_clusters, rng, loops)
    groups = draw_groups(labels, n_groups, group_correlation, rng, n_clusters, loops)
    centres = rng.standard_normal((n_clusters, dim))
    spreads = rng.uniform(*SPREAD_RANGE, n_clusters)
    truth = _place(centres, spreads, labels, rng.standard_normal((n, dim)), loops)
    factors = np.linalg.cholesky(random_spd(n_clusters, dim, rng))
    members = np.repeat(np.arange(n), samples)
    z = rng.standard_normal((n * samples, dim))
    X = np.einsum("nij,nj->ni", factors[labels[members]], z)
    y = np.einsum("nd,nd->n", X, truth[members]) + LINEAR_NOISE_STD * rng.standard_normal(
        n * samples
    )
    return linear_population(X, y, members, groups)


@functools.lru_cache(maxsize=4)
def census_population(
    dataset: str,
    data_home: str | None,
    n_components: int,
    min_samples: int,
    grouping: str = "sex_race",
) -> Population:
    """Build a census-like population from Adult: the paper's census task on data at hand.

    Subpopulations are sex x race x occupation cells with at least
    ``min_samples`` people (the paper's zip code x sex x race); groups are
    sex x race (10) for ``grouping="sex_race"``, or sex or race alone (the
    paper reports sex groups and race groups separately); the cells are the
    same whatever the grouping. The score is ``log(hours-per-week)`` (the paper's log
    commute time); features are the other columns (occupation, sex, race
    and hours left out), standardised, reduced to ``n_components`` SVD
    components (the paper keeps 10), plus an intercept column.
    """
    from osfb_gym.data import load

    data = load(dataset, data_home=data_home)
    names = np.array(data.feature_names)

    def one_hot(column: str) -> tuple[np.ndarray, np.ndarray]:
        columns = np.flatnonzero(np.char.startswith(names, column + "="))
        if columns.size == 0:
            raise ValueError(f"dataset {dataset!r} has no column {column!r}")
        return np.argmax(data.X[:, columns], axis=1), columns

    sex, sex_cols = one_hot(CENSUS_GROUP_COLUMNS[0])
    race, race_cols = one_hot(CENSUS_GROUP_COLUMNS[1])
    split, split_cols = one_hot(CENSUS_SPLIT_COLUMN)
    score_col = np.flatnonzero(names == CENSUS_SCORE)
    if score_col.size == 0:
        raise ValueError(f"dataset {dataset!r} has no column {CENSUS_SCORE!r}")
    drop = np.concatenate([sex_cols, race_cols, split_cols, score_col])
    features = np.delete(np.asarray(data.X, dtype=float), drop, axis=1)
    std = features.std(axis=0)
    features = (features - features.mean(axis=0)) / np.where(std > 0, std, 1.0)
    _, singular, vt = np.linalg.svd(features, full_matrices=False)
    reduced = features @ vt[:n_components].T / singular[:n_components] * np.sqrt(len(features))
    X = np.hstack([reduced, np.ones((len(reduced), 1))])
    y = np.log(np.asarray(data.X[:, score_col[0]], dtype=float))
    n_race = race_cols.size
    group = sex * n_race + race
    cell = group * split_cols.size + split
    cells, members, counts = np.unique(cell, return_inverse=True, return_counts=True)
    keep = counts[members] >= min_samples
    kept_cells, members = np.unique(members[keep], return_inverse=True)
    cell_group = (cells[kept_cells] // split_cols.size).astype(np.int64)
    sex_name = [names[column].split("=", 1)[1] for column in sex_cols]
    race_name = [names[column].split("=", 1)[1] for column in race_cols]
    if grouping == "sex":
        cell_group, label = cell_group // n_race, lambda g: sex_name[g]
    elif grouping == "race":
        cell_group, label = cell_group % n_race, lambda g: race_name[g]
    elif grouping == "sex_race":
        label = lambda g: f"{sex_name[g // n_race]}/{race_name[g % n_race]}"  # noqa: E731
    else:
        raise ValueError(f"grouping must be one of {CENSUS_GROUPINGS}, got {grouping!r}")
    present, cell_group = np.unique(cell_group, return_inverse=True)
    labels = tuple(label(int(g)) for g in present)
    population = linear_population(X[keep], y[keep], members, cell_group)
    return replace(population, group_names=labels)


@functools.lru_cache(maxsize=2)
def movielens_population(
    dataset: str,
    data_home: str | None,
    n_items: int,
    n_subpopulations: int,
    prior: float = 1.0,
    n_components: int = 16,
) -> Population:
    """Build subpopulations of MovieLens viewers rating the ``n_items`` most-rated movies.

    After the paper's Appendix E, simplified: viewers are embedded by a
    truncated SVD (``n_components``) of their ratings of every *other*
    movie and clustered by k-means into ``n_subpopulations``; a service is
    a predicted rating for each of the top movies, and a subpopulation's
    loss is its mean squared error on its ratings of them,
    ``sum_i (c_ji / N_j) (theta_i - m_ji)^2 + c_j``: a Mahalanobis loss with
    a diagonal matrix, its preference the per-movie mean rating ``m_j``.
    Each subpopulation also gets ``prior`` pseudo-ratings of every top
    movie at that movie's global mean, so that it has an opinion on every
    movie and its loss a unique minimiser (Assumption 1). The paper fitted
    a matrix factorisation per subpopulation (200 movies, 1000
    subpopulations) and scored the excess error; matrices are dense here,
    so keep ``n_items`` moderate. No demographic groups: one group.
    """
    import scipy.sparse as sp
    from sklearn.cluster import KMeans
    from sklearn.decomposition import TruncatedSVD

    from osfb_gym.data import load
    from osfb_gym.data.movielens import Ratings

    data = cast(Ratings, load(dataset, data_home=data_home))
    if not isinstance(data, Ratings):
        raise ValueError(f"dataset {dataset!r} is not a ratings data set")
    if n_items >= data.n_items:
        raise ValueError(f"dim (movies kept) must be < {data.n_items} for {dataset!r}")
    if n_subpopulations > data.n_users:
        raise ValueError(f"n_users (subpopulations) must be <= {data.n_users} for {dataset!r}")
    counts = np.bincount(data.item, minlength=data.n_items)
    top = np.argsort(-counts, kind="stable")[:n_items]
    position = np.full(data.n_items, -1)
    position[top] = np.arange(n_items)
    on_top = position[data.item] >= 0
    other = sp.csr_matrix(
        (data.rating[~on_top], (data.user[~on_top], data.item[~on_top])),
        shape=(data.n_users, data.n_items),
    )
    components = min(n_components, data.n_items - n_items - 1)
    embedding = TruncatedSVD(components, random_state=0).fit_transform(other)
    labels = KMeans(n_subpopulations, n_init=1, random_state=0).fit_predict(embedding)
    rows, cols = labels[data.user[on_top]], position[data.item[on_top]]
    rating = data.rating[on_top]
    shape = (n_subpopulations, n_items)
    count, total, square = (np.zeros(shape) for _ in range(3))
    np.add.at(count, (rows, cols), 1.0)
    np.add.at(total, (rows, cols), rating)
    np.add.at(square, (rows, cols), rating * rating)
    movie_mean = total.sum(axis=0) / np.maximum(count.sum(axis=0), 1.0)
    count += prior
    total += prior * movie_mean
    square += prior * movie_mean**2
    size = count.sum(axis=1)
    phi = total / count
    matrices = np.zeros((n_subpopulations, n_items, n_items))
    diagonal = np.arange(n_items)
    matrices[:, diagonal, diagonal] = count / size[:, None]
    offsets = (square - total * phi).sum(axis=1) / size
    return Population(
        "mahalanobis",
        phi,
        np.ones(n_subpopulations),
        np.zeros(n_subpopulations, dtype=np.int64),
        matrices=matrices,
        matrix_index=np.arange(n_subpopulations),
        offsets=np.maximum(offsets, 0.0),
        sizes=np.bincount(labels, minlength=n_subpopulations).astype(float),
    )
