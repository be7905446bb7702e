"""Character 4-grams of a text dataset, hashed into a fixed dimension, built once per text set.

Sculley (2007, Section 6.1) maps each message to "the set of all (possibly
overlapping) contiguous character strings of length 4" taken from its first
3000 characters, as a sparse *binary* vector normalised to unit Euclidean
length; nothing is lower-cased. :func:`hash_char_4grams` builds exactly
that with ``binary=True, lowercase=False`` (``TEXT_FEATURES["binary"]``),
hashing the 4-grams into ``dim`` buckets so the dimension is fixed and no
vocabulary is fitted on the stream: with ``dim = 2**18`` the ``n``
distinct 4-grams of a message share a bucket in about ``n**2 / 2**19``
pairs (about 17 of the ~3000 of a 3000-character message, 0.6%), so the
vector is the paper's up to those collisions. The earlier featurisation, lower-cased 4-gram *counts*
(``TEXT_FEATURES["counts"]``), is kept for the environments that use it
by default (RejectOption-v0's text datasets) and for comparison.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import scipy.sparse as sp

#: characters of a document that are hashed, as in the paper
MAX_CHARS = 3000
#: the paper's hashing dimension: 2^18 buckets, the sparse vectors of Section 6.1
PAPER_TEXT_DIM = 2**18
#: named featurisations: (binary, lowercase)
TEXT_FEATURES = {"binary": (True, False), "counts": (False, True)}

_CACHE: OrderedDict[tuple[int, int, int, bool, bool], tuple[tuple[str, ...], sp.csr_matrix]] = (
    OrderedDict()
)
_CACHE_SIZE = 4


def hash_char_4grams(
    texts: tuple[str, ...], dim: int, *, binary: bool = False, lowercase: bool = True
) -> sp.csr_matrix:
    """Return the hashed, L2-normalised character 4-grams of ``texts`` as a read-only CSR.

    scikit-learn's ``HashingVectorizer(analyzer="char", ngram_range=(4, 4),
    n_features=dim, alternate_sign=False, norm="l2", binary=binary,
    lowercase=lowercase)`` on the first :data:`MAX_CHARS` characters of each
    text, ``float32`` with sorted indices. With ``binary=False`` a 4-gram
    present several times counts that many times before the normalisation
    and two 4-grams hashed to one bucket add up; with ``binary=True`` (the
    paper's features, with ``lowercase=False``) each occupied bucket is 1
    before the normalisation. A text shorter than 4 characters has no
    4-gram: its row is all zeros.

    The matrix is cached for the last few (texts, dim, options), so every
    env of a vector env, a sweep or the tests shares one vectorisation; the
    one-vs-rest Reuters topics share their texts, so they share it too.

    Examples
    --------
    >>> X = hash_char_4grams(("spam spam", "hi"), 64)
    >>> X.shape, X.dtype, round(float(X[0].multiply(X[0]).sum()), 6), X[1].nnz
    ((2, 64), dtype('float32'), 1.0, 0)
    >>> B = hash_char_4grams(("aaaaaa", "AAAA"), 2**18, binary=True, lowercase=False)
    >>> B[0].nnz, float(B[0].data[0]), B[1].indices.tolist() != B[0].indices.tolist()
    (1, 1.0, True)
    """
    key = (len(texts), hash(texts), dim, binary, lowercase)
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
        binary=binary,
        lowercase=lowercase,
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
