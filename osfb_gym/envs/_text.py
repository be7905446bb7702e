"""Hashed character 4-grams of a text dataset, built once per (texts, dimension).

Sculley (2007, Section 6.1) maps each message to the set of its
contiguous character 4-grams ("4-mers") taken from its first 3000
characters, as a sparse binary vector normalised to unit Euclidean length.
Hashing the 4-grams into ``dim`` buckets keeps the dimension fixed and
needs no vocabulary fitted on the stream.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import scipy.sparse as sp

#: characters of a document that are hashed, as in the paper
MAX_CHARS = 3000

_CACHE: OrderedDict[tuple[int, int, int], tuple[tuple[str, ...], sp.csr_matrix]] = OrderedDict()
_CACHE_SIZE = 4


def hash_char_4grams(texts: tuple[str, ...], dim: int) -> sp.csr_matrix:
    """Return the hashed, L2-normalised character 4-grams of ``texts`` as a read-only CSR.

    scikit-learn's ``HashingVectorizer(analyzer="char", ngram_range=(4, 4),
    n_features=dim, alternate_sign=False, norm="l2")`` on the first
    :data:`MAX_CHARS` characters of each text (lower-cased, the
    vectoriser's default), ``float32`` with sorted indices. A 4-gram
    present several times counts that many times before the
    normalisation; two 4-grams hashed to one bucket add up. A text shorter
    than 4 characters has no 4-gram: its row is all zeros.

    The matrix is cached for the last few (texts, dim) pairs, so every env
    of a vector env, a sweep or the tests shares one vectorisation; the
    one-vs-rest Reuters topics share their texts, so they share it too.

    Examples
    --------
    >>> X = hash_char_4grams(("spam spam", "hi"), 64)
    >>> X.shape, X.dtype, round(float(X[0].multiply(X[0]).sum()), 6), X[1].nnz
    ((2, 64), dtype('float32'), 1.0, 0)
    """
    key = (len(texts), hash(texts), dim)
    hit = _CACHE.get(key)
    if hit is not None and (hit[0] is texts or hit[0] == texts):
        _CACHE.move_to_end(key)
        return hit[1]
    from sklearn.feature_extraction.text import HashingVectorizer

    vectorizer = HashingVectorizer(
        analyzer="char",
        ngram_range=(4, 4),
        n_features=dim,
        alternate_sign=False,
        norm="l2",
        dtype=np.float32,
    )
    matrix = sp.csr_matrix(vectorizer.transform([text[:MAX_CHARS] for text in texts]))
    matrix.sort_indices()
    for array in (matrix.data, matrix.indices, matrix.indptr):
        array.flags.writeable = False
    _CACHE[key] = (texts, matrix)
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return matrix
