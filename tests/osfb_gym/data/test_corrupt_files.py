"""Fuzz of the dataset readers with corrupt files: every case is a clear error or a correct load.

Small valid copies of the datasets are written to a temporary folder (a
few rows of the real files from ``$OSFB_DATA`` for every named dataset;
without it, built-in rows of German credit, Pima diabetes, svmguide1 and
SMS Spam), then one corruption at a time is applied: a bad value in a
numeric column (``?``, ``abc``, ``nan``, ``inf``, an empty field), a label
outside the dataset's set, a row with a field too few or too many, an
empty or blank file, UTF-16 or Latin-1 bytes, a header line where none is
expected; and, as controls that must load unchanged, a UTF-8 byte-order
mark, CRLF line ends, trailing blank lines and ``?`` where the real file
has missing values. A "clear error" is a :class:`DataFormatError` naming
the file, the line and the column where there is one; anything else
(another exception, a silent load of corrupt data) fails the test.

``python -m tests.osfb_gym.data.test_corrupt_files`` prints the number of
cases and their outcomes.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from osfb_gym.data import DataFormatError, registry, tabular
from osfb_gym.data.text import R8_TOPICS, SMS_LABELS
from tests.helpers import osfb_data

# Rows of the real files, for the cases that run without $OSFB_DATA.
TEMPLATES: dict[str, dict[str, str]] = {
    "german": {
        "german.data": "A11 6 A34 A43 1169 A65 A75 4 A93 A101 4 A121 67 A143 A152 2 A173 1 A192 "
        "A201 1\nA12 48 A32 A43 5951 A61 A73 2 A92 A101 2 A121 22 A143 A152 1 A173 1 A191 A201 2\n"
        "A11 42 A32 A42 7882 A61 A74 2 A93 A103 4 A122 45 A143 A153 1 A173 2 A191 A201 1\n"
    },
    "diabetes": {
        "pima-indians-diabetes.csv": "6,148,72,35,0,33.6,0.627,50,1\n1,85,66,29,0,26.6,0.351,31,0"
        "\n8,183,64,0,0,23.3,0.672,32,1\n1,89,66,23,94,28.1,0.167,21,0\n"
    },
    "guide": {
        "svmguide1": "1 1:2.617300e+01 2:5.886700e+01 3:-1.894697e-01 4:1.251225e+02\n"
        "0 1:2.230670e+01 2:2.262220e+01 3:2.117224e-01 4:1.012818e+02\n"
        "1 1:1.725900e+01 2:1.734360e+02 3:-1.298053e-01 4:1.250318e+02\n",
        "svmguide1.t": "0 1:4.236298e+00 2:2.198210e+01 3:-3.503797e-01 4:9.752163e+01\n"
        "1 1:5.707397e+01 2:2.214040e+02 3:8.607959e-02 4:1.229114e+02\n",
    },
    "sms_spam": {
        "SMSSpamCollection": "ham\tGo until jurong point, crazy..\nham\tOk lar... Joking wif u oni"
        "...\nspam\tFree entry in 2 a wkly comp to win FA Cup final tkts\nham\tU dun say so early "
        "hor...\n"
    },
}
SEPARATORS: dict[str, str | None] = {"german": None, "australian": None, "bank": ";"}
TEXT_DATASETS = {"sms_spam": SMS_LABELS, "reuters_r8": R8_TOPICS}
ROWS_PER_LABEL = 6


@dataclass(frozen=True)
class Sample:
    """A small valid copy of one dataset, and where its fields sit in its first data file."""

    name: str
    home: Path
    file: str
    kind: str  # "table", "text" or "svmlight"
    sep: str | None
    data_lines: tuple[int, ...]
    positions: dict[str, int]
    numeric: tuple[str, ...]
    target: str
    labels: tuple[str, ...]
    missing: tuple[str, ...] = ()
    text_columns: tuple[str, ...] = ()
    has_header: bool = False
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def spec(self) -> registry.DatasetSpec:
        return registry.get_spec(self.name)

    def paths(self, home: Path) -> list[Path]:
        return [home / str(self.spec.folder) / file for file in self.spec.files]

    def read(self, home: Path) -> Any:
        return self.spec.reader(self.paths(home), **{**self.spec.options, **self.options})


def _table(spec: registry.DatasetSpec) -> tabular.Tabular | None:
    table = getattr(spec.reader, "__self__", None)
    return table if isinstance(table, tabular.Tabular) else None


def _describe(name: str, home: Path) -> Sample:
    """Build the :class:`Sample` of the valid copy of ``name`` under ``home``."""
    spec = registry.get_spec(name)
    folder = home / str(spec.folder)
    if name in TEXT_DATASETS:
        text = (folder / spec.files[0]).read_text()
        lines = [n for n, line in enumerate(text.splitlines(), 1) if "\t" in line]
        lines = [n for n in lines if text.splitlines()[n - 1] != "Class\tExample"]
        return Sample(
            name,
            home,
            spec.files[0],
            "text",
            "\t",
            tuple(lines),
            {"label": 0, "text": 1},
            (),
            "label",
            TEXT_DATASETS[name],
        )
    table = _table(spec)
    assert table is not None, name
    raw = table.read([folder / file for file in spec.files])[0]
    file = raw.rows.path.name
    sep = SEPARATORS.get(name, ",")
    columns = list(raw.columns)
    header = raw.header and not file.endswith(".arff") and name != "blood"
    if header:  # a header naming more columns than the reader keeps: positions by name
        first = (folder / file).read_text().splitlines()[0]
        names = [value.strip() for value in next(csv.reader([first], delimiter=sep or " "))]
        positions = {column: names.index(column) for column in columns}
    else:
        positions = {column: index for index, column in enumerate(columns)}
    labelled = table.target if table.labels else None
    numeric = tuple(c for c in columns if c not in table.text and c != labelled)
    return Sample(
        name,
        home,
        file,
        "svmlight" if name == "guide" else "table",
        None if name == "guide" else sep,
        tuple(raw.rows.lines),
        positions,
        numeric,
        table.target,
        table.labels,
        table.missing,
        tuple(c for c in columns if c in table.text),
        raw.header,
    )


def _head_of_real_files(name: str, source: Path, home: Path) -> None:
    """Copy into ``home`` a few rows of each label of the real files of ``name``."""
    spec = registry.get_spec(name)
    folder = str(spec.folder)
    (home / folder).mkdir(parents=True)
    # A thinned copy first (the first 40 lines, which hold any header, then
    # every k-th line), so that parsing it to pick rows stays quick.
    staged = home / "staged" / folder
    staged.mkdir(parents=True)
    for file in spec.files:
        lines = (source / folder / file).read_text(encoding="utf-8").splitlines()
        step = max(1, len(lines) // 400)
        thinned = lines if file.endswith(".names") else [*lines[:40], *lines[40::step]]
        (staged / file).write_text("\n".join(thinned) + "\n", encoding="utf-8")
    paths = [staged / file for file in spec.files]
    table = _table(spec)
    raws = table.read(paths) if table is not None else []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        raw = next((r for r in raws if r.rows.path == path), None)
        if raw is None and name not in TEXT_DATASETS:  # a .names file: copied whole
            shutil.copy(path, home / folder / path.name)
            continue
        if raw is not None:
            data = raw.rows.lines
            target = raw.columns.index(table.target) if table and table.labels else None
            keys = [row[target] if target is not None else "" for row in raw.rows.fields]
        else:
            data = [
                n
                for n, line in enumerate(lines, 1)
                if "\t" in line and n > 1 or (n == 1 and not line.startswith("Class"))
            ]
            keys = [lines[n - 1].split("\t")[0] for n in data]
        chosen: list[int] = []
        seen: Counter[str] = Counter()
        limit = ROWS_PER_LABEL if table is None or table.labels else 4 * ROWS_PER_LABEL
        for number, key in zip(data, keys, strict=True):
            if seen[key] < limit:
                seen[key] += 1
                chosen.append(number)
        preamble = lines[: data[0] - 1]
        kept = [*preamble, *(lines[n - 1] for n in chosen)]
        (home / folder / path.name).write_text("\n".join(kept) + "\n", encoding="utf-8")


def _build_samples() -> list[Sample]:
    root = Path(tempfile.mkdtemp(prefix="osfb-fuzz-"))
    source = osfb_data()
    samples = []
    if source is None:
        for name, files in TEMPLATES.items():
            folder = root / name / str(registry.get_spec(name).folder)
            folder.mkdir(parents=True)
            for file, text in files.items():
                (folder / file).write_text(text)
            samples.append(_describe(name, root / name))
        return samples
    names = [s.name for s in registry.SPECS if _table(s) is not None or s.name in TEXT_DATASETS]
    for name in names:
        _head_of_real_files(name, source, root / name)
        samples.append(_describe(name, root / name))
    return samples


SAMPLES = _build_samples()


# --------------------------------------------------------------------------- corruptions
@dataclass(frozen=True)
class Case:
    """One corruption of one sample and what it must give."""

    sample: Sample
    label: str
    mutate: Callable[[str], bytes]
    expect: str  # "error" or "load"
    line: int | None = None
    column: str | None = None

    @property
    def id(self) -> str:
        return f"{self.sample.name}-{self.label}"


def _split(line: str, sep: str | None) -> list[str]:
    if sep is None:
        return line.split()
    if sep == "\t":
        return line.split("\t", 1)
    return next(csv.reader([line], delimiter=sep))


def _join(fields: list[str], sep: str | None) -> str:
    if sep is None:
        return " ".join(fields)
    if sep == "\t":
        return "\t".join(fields)
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=sep, lineterminator="").writerow(fields)
    return buffer.getvalue()


def _edit(
    number: int, edit: Callable[[list[str]], list[str]], sep: str | None, encoding: str = "utf-8"
) -> Callable[[str], bytes]:
    """Edit line ``number``; only that line is written in ``encoding``, the rest in UTF-8."""

    def mutate(text: str) -> bytes:
        lines = text.split("\n")
        edited = _join(edit(_split(lines[number - 1], sep)), sep).encode(encoding)
        before = "".join(line + "\n" for line in lines[: number - 1]).encode()
        after = "".join("\n" + line for line in lines[number:]).encode()
        return before + edited + after

    return mutate


def _set(position: int, value: str) -> Callable[[list[str]], list[str]]:
    return lambda fields: [*fields[:position], value, *fields[position + 1 :]]


def _svm_set(position: int, value: str) -> Callable[[list[str]], list[str]]:
    """Set feature ``position`` (0-based; -1 the label) of a LIBSVM line to ``value``."""

    def edit(fields: list[str]) -> list[str]:
        if position < 0:
            return [value, *fields[1:]]
        return [
            fields[0],
            *[
                f"{position + 1}:{value}" if f.startswith(f"{position + 1}:") else f
                for f in fields[1:]
            ],
        ]

    return edit


BAD_NUMBERS = ("?", "abc", "nan", "inf", "-inf", "", "1.5.2")
BAD_LABELS = ("3", "7", "2", "maybe", "-1", "1.0", "yes", "")


def cases_of(sample: Sample) -> Iterator[Case]:
    """Every corruption that applies to ``sample``, with its expected outcome."""
    sep, lines = sample.sep, sample.data_lines
    row = lines[len(lines) // 2]
    first = lines[0]
    valid = (sample.home / str(sample.spec.folder) / sample.file).read_text()
    yield Case(sample, "empty", lambda text: b"", "error")
    yield Case(sample, "blank", lambda text: b" \n\n  \n", "error")
    yield Case(sample, "utf16", lambda text: text.encode("utf-16"), "error", line=1)
    yield Case(sample, "bom", lambda text: b"\xef\xbb\xbf" + text.encode(), "load")
    yield Case(sample, "crlf", lambda text: text.replace("\n", "\r\n").encode(), "load")
    yield Case(sample, "trailing-blank-lines", lambda text: (text + "\n\n \n").encode(), "load")
    if sample.kind == "svmlight":
        for value in BAD_NUMBERS[1:]:
            yield Case(
                sample, f"value={value!r}", _edit(row, _svm_set(1, value), None), "error", row, "x2"
            )
        yield Case(
            sample, "index-out-of-range", _edit(row, lambda f: [*f, "5:1.0"], None), "error", row
        )
        yield Case(
            sample, "pair-without-colon", _edit(row, lambda f: [*f, "1.0"], None), "error", row
        )
        for value in ("7", "-1", "2", "abc"):
            yield Case(
                sample,
                f"label={value!r}",
                _edit(row, _svm_set(-1, value), None),
                "error",
                row,
                "label",
            )
        yield Case(sample, "latin1", _edit(row, _svm_set(0, "1é"), None, "latin-1"), "error", row)
        yield Case(
            sample, "header", lambda text: ("label x1 x2 x3 x4\n" + text).encode(), "error", 1
        )
        return
    if sample.kind == "text":
        for value in ("maybe", "Spam", "", "1"):
            yield Case(
                sample, f"label={value!r}", _edit(row, _set(0, value), "\t"), "error", row, "label"
            )
        yield Case(sample, "no-tab", _edit(row, lambda f: [" ".join(f)], "\t"), "error", row)
        yield Case(sample, "empty-text", _edit(row, lambda f: [f[0], "  "], "\t"), "error", row)
        yield Case(
            sample,
            "latin1",
            _edit(row, lambda f: [f[0], f[1] + " café"], "\t", "latin-1"),
            "error",
            row,
        )
        yield Case(sample, "header", lambda text: ("label\ttext\n" + text).encode(), "error", 1)
        return
    position = sample.positions
    numeric = [c for c in sample.numeric if c in position]
    probes = list(dict.fromkeys([numeric[0], numeric[len(numeric) // 2], numeric[-1]]))
    for column in probes:
        for value in BAD_NUMBERS:
            legit = column in sample.missing and value in ("?", "")
            if value == "" and sep is None:
                continue  # whitespace-separated: an empty field is a short row, below
            yield Case(
                sample,
                f"{column}={value!r}",
                _edit(row, _set(position[column], value), sep),
                "load" if legit else "error",
                None if legit else row,
                column,
            )
    if sample.labels:
        for value in BAD_LABELS:
            if value in sample.labels or (value == "" and sep is None):
                continue
            yield Case(
                sample,
                f"label={value!r}",
                _edit(row, _set(position[sample.target], value), sep),
                "error",
                row,
                sample.target,
            )
    for column in sample.missing:
        if column in position:
            yield Case(
                sample, f"{column}=missing", _edit(row, _set(position[column], "?"), sep), "load"
            )
    yield Case(sample, "short-row", _edit(row, lambda f: f[:-1], sep), "error", row)
    yield Case(sample, "long-row", _edit(row, lambda f: [*f, f[-1]], sep), "error", row)
    where = sample.text_columns[0] if sample.text_columns else numeric[0]
    yield Case(
        sample,
        "latin1",
        _edit(row, lambda f: _set(position[where], "café")(f), sep, "latin-1"),
        "error",
        row,
    )
    if not sample.has_header:
        names = [f"col{j}" for j in range(len(_split(valid.split("\n")[first - 1], sep)))]
        yield Case(
            sample, "header", lambda text: (_join(names, sep) + "\n" + text).encode(), "error", 1
        )
    elif not sample.file.endswith(".arff"):
        header = valid.split("\n")[0]
        yield Case(sample, "header-twice", lambda text: (header + "\n" + text).encode(), "error", 2)
        yield Case(sample, "header-only", lambda text: (header + "\n").encode(), "error")
    if sample.file.endswith(".arff"):
        yield Case(
            sample,
            "no-data-section",
            lambda text: text.split("@data")[0].split("@DATA")[0].encode(),
            "error",
        )


CASES = [case for sample in SAMPLES for case in cases_of(sample)]


def run_case(case: Case, home: Path) -> tuple[str, Any]:
    """Apply ``case`` to a copy of its sample under ``home``; return the outcome."""
    folder = home / str(case.sample.spec.folder)
    shutil.copytree(case.sample.home / str(case.sample.spec.folder), folder)
    target = folder / case.sample.file
    target.write_bytes(case.mutate(target.read_text()))
    try:
        return "loaded", case.sample.read(home)
    except DataFormatError as error:
        return "error", error


def check_case(case: Case, home: Path) -> str:
    outcome, result = run_case(case, home)
    if case.expect == "error":
        assert outcome == "error", f"{case.id}: loaded silently"
        message = str(result)
        assert case.sample.file in message and "\n" not in message, message
        if case.line is not None:
            assert f"line {case.line}" in message, message
        if case.column is not None:
            assert repr(case.column) in message, message
        assert "expected" in message, message
        return "clear error"
    assert outcome == "loaded", f"{case.id}: {result}"
    baseline = case.sample.read(case.sample.home)
    if case.label.endswith("=missing"):
        assert _size(result) == _size(baseline)
    else:
        for attribute in ("X", "y", "texts"):
            if hasattr(baseline, attribute):
                assert np.array_equal(getattr(result, attribute), getattr(baseline, attribute))
    return "loaded correctly"


def _size(record: Any) -> int:
    return int(len(record.y))


# The four datasets the built-in rows cover run by default; the others, from
# $OSFB_DATA, with the slow tests (-m slow).
@pytest.mark.parametrize(
    "case",
    [
        pytest.param(case, marks=[] if case.sample.name in TEMPLATES else [pytest.mark.slow])
        for case in CASES
    ],
    ids=[case.id for case in CASES],
)
def test_corrupt_file_is_a_clear_error_or_loads_correctly(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)


def test_the_fuzz_covers_every_class_of_corruption() -> None:
    kinds = {case.label.split("=")[0] for case in CASES}
    assert {"empty", "blank", "utf16", "latin1", "bom", "crlf", "header", "label"} <= kinds
    assert any(case.expect == "load" for case in CASES)
    names = {case.sample.name for case in CASES}
    assert {"german", "diabetes", "guide", "sms_spam"} <= names


# --------------------------------------------------------------------------- random values
TABLES = [sample for sample in SAMPLES if sample.kind == "table"]


def _arff_domains(sample: Sample) -> dict[str, set[str]]:
    """The listed values of each nominal ``@attribute`` of an ARFF sample (none elsewhere)."""
    if not sample.file.endswith(".arff"):
        return {}
    domains = {}
    for line in (sample.home / str(sample.spec.folder) / sample.file).read_text().splitlines():
        parts = line.split(None, 2)
        if len(parts) == 3 and parts[0].lower() == "@attribute" and parts[2].startswith("{"):
            domains[parts[1].strip("'")] = {v.strip() for v in parts[2].strip("{} ").split(",")}
    return domains


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_value_in_a_cell_is_an_error_or_read_as_written(data: st.DataObject) -> None:
    """A random string in a random cell is read where the spec allows it, else an error."""
    sample = data.draw(st.sampled_from(TABLES))
    row = data.draw(st.sampled_from(sample.data_lines))
    column = data.draw(
        st.sampled_from([*sample.numeric, *([sample.target] if sample.labels else [])])
    )
    forbidden = '\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"' + (sample.sep or " \t")
    value = data.draw(
        st.text(
            st.characters(blacklist_characters=forbidden, blacklist_categories=["Cs", "Zs", "Cc"]),
            min_size=1,
            max_size=8,
        )
    )
    if sample.sep is None:
        value = value.strip() or "x"
    if column in sample.numeric:
        try:
            legit = bool(np.isfinite(float(value.strip())))
        except ValueError:
            legit = value.strip() == "?" and column in sample.missing
        nominal = _arff_domains(sample).get(column)
        if nominal is not None:  # an ARFF nominal attribute takes only its listed values
            legit = legit and value.strip() in nominal
    else:
        legit = value.strip() in sample.labels
    case = Case(
        sample,
        f"{column}={value!r}",
        _edit(row, _set(sample.positions[column], value), sample.sep),
        "load" if legit else "error",
        None if legit else row,
        column,
    )
    with tempfile.TemporaryDirectory() as home:
        outcome, result = run_case(case, Path(home))
    if legit:
        assert outcome == "loaded", result
    else:
        assert outcome == "error", f"{case.id} loaded silently"
        assert f"line {row}" in str(result) and repr(column) in str(result), str(result)


def kind_of(case: Case) -> str:
    """The class of corruption of ``case``, for the counts."""
    name = case.label.split("=")[0]
    if name == "label" or "=" not in case.label:
        return name
    return "missing value where allowed" if case.expect == "load" else "bad value in a column"


def main() -> None:
    """Print the number of cases and their outcomes, by class of corruption."""
    counts: Counter[tuple[str, str]] = Counter()
    for case in CASES:
        with tempfile.TemporaryDirectory() as home:
            counts[(kind_of(case), check_case(case, Path(home)))] += 1
    source = os.environ.get("OSFB_DATA") or "built-in rows"
    totals = Counter(outcome for _, outcome in counts.elements())
    print(f"{len(CASES)} cases on {len(SAMPLES)} datasets ({source}): {dict(totals)}")
    for (kind, outcome), count in sorted(counts.items()):
        print(f"  {kind}: {count} {outcome}")


if __name__ == "__main__":
    main()
