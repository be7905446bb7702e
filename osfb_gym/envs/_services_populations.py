"""User populations of MultiServiceChoice: synthetic clusters, linear predictors, census-like.

Each builder returns a :class:`~osfb_gym.core.service_losses.Population`
drawn from the generator it is given (the world's), so a world is fixed by
its seed alone.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np

from osfb_gym.core.service_losses import Population

CENTRE_SPREAD = 4.0  # cluster centres ~ N(0, 4^2 I)
SPREAD_RANGE = (0.3, 1.0)  # within-cluster standard deviation, per cluster
EIGEN_LOG_RANGE = 1.5  # Mahalanobis eigenvalues in exp([-1.5, 1.5]): condition up to ~20
WEIGHT_LOG_STD = 0.5  # per-user weights, lognormal
HUBER_DELTA_RANGE = (0.25, 2.0)  # Huber thresholds, per cluster
COSINE_SPREAD_RANGE = (0.1, 0.4)
LINEAR_NOISE_STD = 0.5  # score noise of the linear-predictor subpopulations
CENSUS_GROUP_COLUMNS = ("sex", "race")
CENSUS_SPLIT_COLUMN = "occupation"
CENSUS_SCORE = "hours-per-week"


def random_spd(m: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """Draw ``m`` random SPD matrices: random rotations, eigenvalues ``exp(U[-1.5, 1.5])``."""
    rotations = np.linalg.qr(rng.standard_normal((m, d, d)))[0]
    eigen = np.exp(rng.uniform(-EIGEN_LOG_RANGE, EIGEN_LOG_RANGE, (m, d)))
    matrices = np.einsum("mij,mj,mkj->mik", rotations, eigen, rotations)
    return 0.5 * (matrices + np.swapaxes(matrices, 1, 2))


def cluster_labels(n: int, n_clusters: int, rng: np.random.Generator) -> np.ndarray:
    """Assign ``n`` users to clusters of unequal sizes (Dirichlet(1) shares), each non-empty."""
    shares = rng.dirichlet(np.ones(n_clusters))
    labels = np.concatenate(
        [np.arange(n_clusters), rng.choice(n_clusters, n - n_clusters, p=shares)]
    )
    return rng.permutation(labels)


def draw_groups(
    labels: np.ndarray, n_groups: int, correlation: float, rng: np.random.Generator
) -> np.ndarray:
    """Draw groups: each cluster has a home group, a user takes it with chance ``correlation``.

    Otherwise the group is uniform, so ``correlation=0`` makes groups
    independent of preferences and ``1`` makes each cluster one group.
    """
    home = rng.permutation(np.arange(labels.max() + 1) % n_groups)[labels]
    other = rng.integers(0, n_groups, labels.size)
    return np.where(rng.random(labels.size) < correlation, home, other).astype(np.int64)


def _loners(n: int, fraction: float, rng: np.random.Generator) -> np.ndarray:
    """Pick ``floor(fraction * n)`` users at random to be outliers."""
    return rng.choice(n, int(fraction * n), replace=False)


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
    labels = cluster_labels(n, n_clusters, rng)
    groups = draw_groups(labels, n_groups, group_correlation, rng)
    if loss == "cosine":
        centres = rng.standard_normal((n_clusters, dim))
        centres /= np.linalg.norm(centres, axis=1, keepdims=True)
        spread = rng.uniform(*COSINE_SPREAD_RANGE, n_clusters)[labels]
        phi = centres[labels] + spread[:, None] * rng.standard_normal((n, dim))
        loners = _loners(n, outlier_fraction, rng)
        phi[loners] = rng.standard_normal((loners.size, dim))
        phi /= np.linalg.norm(phi, axis=1, keepdims=True)
        weights = np.exp(WEIGHT_LOG_STD * rng.standard_normal(n))
        return Population("cosine", phi, weights, groups)
    centres = CENTRE_SPREAD * rng.standard_normal((n_clusters, dim))
    spread = rng.uniform(*SPREAD_RANGE, n_clusters)[labels]
    phi = centres[labels] + spread[:, None] * rng.standard_normal((n, dim))
    loners = _loners(n, outlier_fraction, rng)
    bound = 3 * CENTRE_SPREAD
    phi[loners] = rng.uniform(-bound, bound, (loners.size, dim))
    if loss == "squared":
        return Population("squared", phi, np.ones(n), groups)
    if loss == "huber":
        deltas = rng.uniform(*HUBER_DELTA_RANGE, n_clusters)[labels]
        return Population("huber", phi, np.ones(n), groups, deltas=deltas)
    weights = np.exp(WEIGHT_LOG_STD * rng.standard_normal(n))
    matrices = random_spd(n_clusters, dim, rng)
    return Population("mahalanobis", phi, weights, groups, matrices=matrices, matrix_index=labels)


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
    labels = cluster_labels(n, n_clusters, rng)
    groups = draw_groups(labels, n_groups, group_correlation, rng)
    centres = CENTRE_SPREAD * rng.standard_normal((n_clusters, dim))
    spread = rng.uniform(*SPREAD_RANGE, n_clusters)[labels]
    truth = centres[labels] + spread[:, None] * rng.standard_normal((n, dim))
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
    dataset: str, data_home: str | None, n_components: int, min_samples: int
) -> Population:
    """Build a census-like population from Adult: the paper's census task on data at hand.

    Subpopulations are sex x race x occupation cells with at least
    ``min_samples`` people (the paper's zip code x sex x race); groups are
    sex x race (10). The score is ``log(hours-per-week)`` (the paper's log
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
    present, cell_group = np.unique(cell_group, return_inverse=True)
    labels = tuple(
        f"{names[sex_cols[g // n_race]].split('=', 1)[1]}/"
        f"{names[race_cols[g % n_race]].split('=', 1)[1]}"
        for g in present
    )
    population = linear_population(X[keep], y[keep], members, cell_group)
    return replace(population, group_names=labels)
