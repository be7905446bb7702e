"""OneSidedLending on a dataset: the stratified warm split, the fitted beta*, the cached world."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from osfb_gym.core.links import Link

if TYPE_CHECKING:
    from osfb_gym.data import Dataset


def stratified_split(
    y: np.ndarray, n_warm: int, rng: np.random.Generator, *, stratify: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Split row indices into a warm-start sample of ``n_warm`` rows and a shuffled stream.

    With ``stratify`` each class gets its share of the warm sample
    (``n_c * n_warm / n`` rounded by largest remainder, so the sizes add up
    to ``n_warm``), the split scikit-learn's ``train_test_split(stratify=y)``
    makes up to how it rounds; the rows of each class are drawn uniformly.
    The stream is the rest in a uniformly random order, drawn separately.

    Examples
    --------
    >>> y = np.array([0.0] * 80 + [1.0] * 20)
    >>> warm, stream = stratified_split(y, 10, np.random.default_rng(0))
    >>> int(y[warm].sum()), warm.size + stream.size, np.union1d(warm, stream).size
    (2, 100, 100)
    """
    n = y.shape[0]
    perm = rng.permutation(n)
    is_warm = np.zeros(n, dtype=bool)
    if stratify:
        _, codes = np.unique(y, return_inverse=True)
        counts = np.bincount(codes)
        take = counts * n_warm // n
        remainder = counts * n_warm % n
        # largest remainders first, ties to the larger class, then to the first
        extra = np.lexsort((np.arange(counts.size), -counts, -remainder))
        take[extra[: n_warm - int(take.sum())]] += 1
        codes_perm = codes[perm]
        for k, size in enumerate(take):
            is_warm[perm[codes_perm == k][:size]] = True
    else:
        is_warm[perm[:n_warm]] = True
    warm = perm[is_warm[perm]]
    stream = rng.permutation(np.flatnonzero(~is_warm))
    return warm, stream


def fit_beta(X: np.ndarray, y: np.ndarray, link: Link) -> np.ndarray:
    """Fit ``beta*`` of a dataset whose last column of ``X`` is the intercept (all ones).

    ``link="linear"``: ordinary least squares, the minimum-norm solution
    through the SVD, so it stays defined when one-hot columns are collinear
    with the intercept: ``np.linalg.lstsq`` with its default cutoff for
    small singular values, computed by LAPACK's ``gelss`` instead of
    ``gelsd``, which is several times faster on a tall matrix and never
    slower. ``link="logistic"``: scikit-learn's ``LogisticRegression`` with
    its default model (L2 penalty, ``C=1.0``, unpenalised intercept), the
    fit the paper ran. The intercept is fitted by scikit-learn
    (``fit_intercept=True`` on the other columns) rather than through the
    ones column, which would penalise it. The ``newton-cholesky`` solver,
    made for many more rows than features, reaches the optimum to a tight
    tolerance in a few iterations: ``beta*`` is the oracle every loss is
    measured against, so it should be the optimum, not near it.
    """
    if link.name == "linear":
        from scipy.linalg import lstsq

        cond = np.finfo(np.float64).eps * max(X.shape)  # np.linalg.lstsq's rcond=None
        return np.asarray(lstsq(X, y, cond=cond, lapack_driver="gelss")[0])
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=1.0, solver="newton-cholesky", tol=1e-10, max_iter=100)
    model.fit(X[:, :-1], y)
    return np.append(model.coef_[0], model.intercept_[0])


@dataclass(frozen=True)
class DatasetWorld:
    """The fixed truth of a dataset-backed lending episode (read-only arrays).

    Attributes
    ----------
    X
        Standardised features with the ``"intercept"`` column (all ones)
        last, ``float32`` exactly as observed.
    y
        The real outcomes (labels).
    beta
        ``beta*`` fitted on every row (:func:`fit_beta`).
    mu
        ``mu(x . beta*)`` of every row.
    feature_names
        Names of the columns of ``X``.
    bound
        The largest ``|feature|``: the observation space's bound.
    binary
        Whether the outcomes are 0/1 classes (then the warm split is stratified).
    """

    X: np.ndarray
    y: np.ndarray
    beta: np.ndarray
    mu: np.ndarray
    feature_names: tuple[str, ...]
    bound: float
    binary: bool


#: how a dataset's columns are scaled before the intercept is appended
SCALINGS = ("standard", "robust")


def build_dataset_world(data: Dataset, link: Link, scaling: str = "standard") -> DatasetWorld:
    """Scale ``data``, append the intercept column and fit ``beta*`` on all rows.

    ``scaling="standard"``: mean 0, standard deviation 1; ``"robust"``:
    median 0, interquartile range 1 (:meth:`~osfb_gym.data.Dataset.robust_scaled`).

    Features are rounded to ``float32`` before the fit, so ``beta*`` and
    ``mu`` are computed from exactly what the agent observes.
    """
    if link.name == "logistic" and data.task != "binary":
        raise ValueError(
            f"link='logistic' needs 0/1 outcomes, but dataset {data.name!r} has "
            f"task={data.task!r}; use link='linear'"
        )
    standard = data.robust_scaled().X if scaling == "robust" else data.standardized().X
    X = np.hstack([standard, np.ones((standard.shape[0], 1))]).astype(np.float32)
    X64 = X.astype(np.float64)
    y = np.array(data.y, dtype=np.float64)
    beta = fit_beta(X64, y, link)
    mu = np.asarray(link.mean(X64 @ beta), dtype=np.float64)
    for array in (X, y, beta, mu):
        array.flags.writeable = False
    return DatasetWorld(
        X,
        y,
        beta,
        mu,
        (*data.feature_names, "intercept"),
        bound=float(np.max(np.abs(X))),
        binary=bool(np.isin(y, (0.0, 1.0)).all()),
    )


_WORLD_CACHE: OrderedDict[tuple[int, str, str], tuple[Dataset, DatasetWorld]] = OrderedDict()
_WORLD_CACHE_SIZE = 8


def dataset_world(data: Dataset, link: Link, scaling: str = "standard") -> DatasetWorld:
    """Return :func:`build_dataset_world` of ``data``, fitted once per record, link and scaling.

    ``load`` hands out the same record for the same name and folder, so
    every env built on it (a vector env, the generic tests, a sweep) shares
    one fit instead of repeating a logistic regression on 48,842 rows.
    """
    key = (id(data), link.name, scaling)
    hit = _WORLD_CACHE.get(key)
    if hit is not None and hit[0] is data:
        _WORLD_CACHE.move_to_end(key)
        return hit[1]
    world = build_dataset_world(data, link, scaling)
    _WORLD_CACHE[key] = (data, world)  # the record is kept so its id is not reused
    while len(_WORLD_CACHE) > _WORLD_CACHE_SIZE:
        _WORLD_CACHE.popitem(last=False)
    return world


def stream_batches(
    stream: np.ndarray, batch_size: int, last_batch: str = "pad"
) -> tuple[np.ndarray, np.ndarray]:
    """Cut a shuffled stream of row indices into batches: ``(full batches, last rows)``.

    The full batches are a ``(steps, batch_size)`` array of row indices in
    stream order; the rows after them, fewer than ``batch_size``, are the
    last, partial batch with ``last_batch="pad"`` (the env pads it to the
    batch shape) and are left out with ``"drop"`` (an empty array).

    Examples
    --------
    >>> full, last = stream_batches(np.arange(7), 3)
    >>> full.tolist(), last.tolist()
    ([[0, 1, 2], [3, 4, 5]], [6])
    >>> stream_batches(np.arange(7), 3, "drop")[1].size
    0
    """
    steps = len(stream) // batch_size
    full = stream[: steps * batch_size].reshape(steps, batch_size)
    last = stream[steps * batch_size :] if last_batch == "pad" else stream[:0]
    return full, last


def stream_steps(rows: int, batch_size: int, last_batch: str = "pad") -> tuple[int, int, int]:
    """Return the steps of a stream of ``rows`` rows, the rows dropped and the padding rows.

    Examples
    --------
    >>> stream_steps(7, 3), stream_steps(7, 3, "drop"), stream_steps(6, 3)
    ((3, 0, 2), (2, 1, 0), (2, 0, 0))
    """
    full, rest = divmod(rows, batch_size)
    if last_batch == "drop":
        return full, rest, 0
    return full + (rest > 0), 0, (batch_size - rest) % batch_size


def dataset_batch(
    data: DatasetWorld, full: np.ndarray, last: np.ndarray, t: int, batch_size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Batch ``t`` of a stream cut by :func:`stream_batches`: ``(x, mu, y, valid)``.

    ``valid`` is None for a full batch. The partial last batch has its real
    rows first, then zero rows of padding (``valid`` False there): zero
    features, ``mu`` and ``y``, which the env never reveals, rewards or
    scores. Past the stream's end, empty arrays.
    """
    if t < full.shape[0]:
        rows = full[t]
        # (take: the rows fancy indexing copies, in a third of its time on a 2-d array)
        return data.X.take(rows, axis=0), data.mu[rows], data.y[rows], None
    if t == full.shape[0] and last.size:
        n = last.size
        x = np.zeros((batch_size, data.X.shape[1]), dtype=data.X.dtype)
        mu, y = np.zeros(batch_size), np.zeros(batch_size)
        x[:n], mu[:n], y[:n] = data.X[last], data.mu[last], data.y[last]
        return x, mu, y, np.arange(batch_size) < n
    return np.zeros((0, data.X.shape[1]), dtype=data.X.dtype), np.empty(0), np.empty(0), None
