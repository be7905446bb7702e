"""The grader's secrets: episode seeds, agent seeds and the secret world of a dataset.

Everything an env computes is a function of public code, public files and
its arguments, so a submission that could name those arguments could
rebuild the graded world in its own process and read its hidden truth.
The grader therefore keeps three independent streams of its own entropy
(:func:`grading_streams`):

- the episode seeds (``reset(seed=...)`` of the env, which draws a
  synthetic world and every stream's order from it);
- the agents' reset seeds, from a stream of their own, so what the agent
  is given says nothing about the episode's seed;
- the world's secret: for a dataset-backed env, the graded world is a
  **bootstrap replicate** of the dataset (:func:`bootstrap_dataset`):
  ``n`` rows drawn with replacement from the ``n`` public ones, from which
  the env then standardises the features, fits ``beta*`` and draws its
  order as it does for any dataset. It is an instance of the same setting
  (the empirical distribution of the data, as a statistician's bootstrap
  uses it), and the references are scored on the very same replicate; but
  rebuilding the env from the public file gives a different ``beta*``,
  a different cutoff and a different standardisation, so it reproduces
  nothing the grader scores exactly.

A bootstrap cannot hide what the public file says about the rows (a
row's label, the full-data fit): knowing it is still worth a lot. That
part is caught after the fact (:mod:`osfb_gym.grade.integrity`): a score
far beyond what the family's reference learners reach even when shown
every outcome is reported as SUSPICIOUS, not as better.

With a ``seed`` (reproduction mode) all three streams derive from it: a
small seed can be searched by a submission, so such a grading is marked
as a reproduction, not an official grading.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

#: spawn keys of the grader's streams under one root: episodes use the root itself
AGENT_STREAM, WORLD_STREAM = 1, 2
#: GradeReport.mode: fresh entropy (official) or a given seed (reproduction)
MODES = ("official", "reproduction")


@dataclass(frozen=True)
class GradingStreams:
    """The grader's randomness for one grading.

    Attributes
    ----------
    mode
        ``"official"`` (fresh entropy) or ``"reproduction"`` (a given seed).
    agent_seeds
        The agents' reset seeds, one per episode, independent of the episodes'.
    world
        The root of the world's secret (the bootstrap of a dataset).
    """

    mode: str
    agent_seeds: list[int]
    world: np.random.SeedSequence


def _root(seed: int | None, stream: int) -> np.random.SeedSequence:
    if seed is None:
        return np.random.SeedSequence()  # fresh entropy from the operating system
    return np.random.SeedSequence(seed, spawn_key=(stream,))


def grading_streams(n_seeds: int, seed: int | None) -> GradingStreams:
    """Return the agents' seeds and the world's secret of a grading of ``n_seeds`` episodes.

    The episode seeds are ``held_out_seeds(n_seeds, seed)``
    (:func:`osfb_gym.grade.held_out_seeds`: ``SeedSequence(seed)``); these
    streams are ``SeedSequence(seed, spawn_key=(k,))`` with their own ``k``,
    independent of it and of each other. None draws each from fresh entropy.

    Examples
    --------
    >>> a, b = grading_streams(2, 7), grading_streams(2, 7)
    >>> a.agent_seeds == b.agent_seeds, a.mode, grading_streams(2, None).mode
    (True, 'reproduction', 'official')
    """
    state = _root(seed, AGENT_STREAM).generate_state(n_seeds, dtype=np.uint64)
    return GradingStreams(
        mode="official" if seed is None else "reproduction",
        agent_seeds=[int(value >> np.uint64(1)) for value in state],
        world=_root(seed, WORLD_STREAM),
    )


def bootstrap_dataset(data: Any, rng: np.random.Generator) -> Any:
    """Return a bootstrap replicate of a dataset record: its ``n`` rows drawn with replacement.

    Works on any record with ``y`` and either ``X`` (:class:`~osfb_gym.data.Dataset`)
    or ``texts`` (:class:`~osfb_gym.data.TextDataset`); the name is kept (an
    env reads it, e.g. Reuters' topic), the metadata say it is a replicate.

    Examples
    --------
    >>> from osfb_gym.data import from_arrays
    >>> data = from_arrays(np.arange(8.0).reshape(4, 2), [0, 1, 0, 1], name="toy")
    >>> copy = bootstrap_dataset(data, np.random.default_rng(0))
    >>> copy.name, copy.X.shape, copy.metadata["world"]
    ('toy', (4, 2), 'a bootstrap replicate (grader-only)')
    >>> bool(set(map(tuple, copy.X)) <= set(map(tuple, data.X)))
    True
    """
    n = len(data.y)
    cut = data.metadata.get("train_rows")
    if isinstance(cut, int) and 0 < cut < n:  # a split of its own (Reuters' ModApte): kept
        rows = np.concatenate([rng.integers(0, cut, size=cut), rng.integers(cut, n, size=n - cut)])
    else:
        rows = rng.integers(0, n, size=n)
    metadata = {**dict(data.metadata), "world": "a bootstrap replicate (grader-only)"}
    if hasattr(data, "X"):
        X, y = np.asarray(data.X)[rows], np.asarray(data.y)[rows]
        return replace(data, X=X, y=y, metadata=metadata)
    if hasattr(data, "texts"):
        texts = tuple(data.texts[i] for i in rows)
        return replace(data, texts=texts, y=np.asarray(data.y)[rows], metadata=metadata)
    raise TypeError(f"dataset must be a Dataset or TextDataset record, got {type(data).__name__}")


def _load_record(env_id: str, kwargs: dict[str, Any]) -> Any:
    """Load the record ``kwargs["dataset"]`` names, as the env would (its loader's options)."""
    from osfb_gym.data import load

    dataset = kwargs["dataset"]
    if not isinstance(dataset, str):
        return dataset
    options: dict[str, Any] = {}
    if kwargs.get("encoding") is not None:
        options["encoding"] = kwargs["encoding"]
    return load(dataset, data_home=kwargs.get("data_home"), download=False, **options)


def secret_worlds(
    env_id: str, kwargs: dict[str, Any], world: np.random.SeedSequence, n_episodes: int
) -> tuple[list[dict[str, Any]], str]:
    """Return the env arguments of each graded episode's world, and one line saying what they are.

    A dataset-backed world becomes one bootstrap replicate per episode,
    each drawn from its own child of ``world`` (the grader's entropy), so
    the grading averages over the data's variability as a bootstrap does
    and every agent meets the same replicate in the same episode. A
    synthetic world is drawn by the env from each episode's secret seed,
    as always. A ``world_seed`` in ``kwargs`` would make the world public
    (anyone can pass it to ``gym.make``), so it is refused.

    Raises
    ------
    ValueError
        For ``world_seed`` in ``kwargs``.
    """
    if kwargs.get("world_seed") is not None:
        raise ValueError(
            "env_kwargs must not fix world_seed for grading: a world_seed anyone can pass to "
            "gym.make makes the hidden world public; the grader draws the worlds from its own "
            f"secret seeds, got world_seed={kwargs['world_seed']!r}"
        )
    if kwargs.get("dataset") is None:
        public = dict(kwargs)  # one world for every episode: the env is made once
        return [public] * n_episodes, ("synthetic worlds drawn from secret episode seeds")
    record = _load_record(env_id, kwargs)
    name = getattr(record, "name", kwargs["dataset"])
    base = {key: value for key, value in kwargs.items() if key not in ("encoding", "data_home")}
    worlds = [
        {**base, "dataset": bootstrap_dataset(record, np.random.default_rng(child))}
        for child in world.spawn(n_episodes)
    ]
    return worlds, (
        f"a secret bootstrap replicate of dataset {name!r} per episode (grader-only entropy)"
    )
