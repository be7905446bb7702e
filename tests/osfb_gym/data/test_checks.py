"""The corrupt inputs named in the issue, each with the exact error a user sees."""

from __future__ import annotations

from pathlib import Path

import pytest

from osfb_gym.data import DataFormatError, load
from tests.osfb_gym.data.test_corrupt_files import TEMPLATES


def home_with(tmp_path: Path, name: str, folder: str, edit: dict[str, bytes]) -> Path:
    """A data home holding the built-in rows of ``name``, with ``edit`` replacing files."""
    (tmp_path / folder).mkdir()
    for file, text in TEMPLATES[name].items():
        (tmp_path / folder / file).write_bytes(edit.get(file, text.encode()))
    return tmp_path


def german_with(tmp_path: Path, line: int, field: int, value: str) -> Path:
    lines = TEMPLATES["german"]["german.data"].splitlines()
    fields = lines[line - 1].split()
    fields[field] = value
    lines[line - 1] = " ".join(fields)
    return home_with(
        tmp_path, "german", "german_credit", {"german.data": "\n".join(lines).encode()}
    )


def test_a_question_mark_in_credit_amount_is_an_error_not_new_columns(tmp_path: Path) -> None:
    home = german_with(tmp_path, 2, 4, "?")
    message = f"{home / 'german_credit' / 'german.data'}, line 2, column 'credit_amount': "
    with pytest.raises(
        DataFormatError,
        match="^"
        + message.replace(".", r"\.")
        + r"'\?' \(a missing value\); expected a finite number$",
    ):
        load("german", data_home=home, download=False)


def test_german_class_3_is_an_error_not_class_0(tmp_path: Path) -> None:
    with pytest.raises(
        DataFormatError,
        match=r"line 3, column 'class': '3' is not an allowed "
        r"value; expected one of '1', '2'",
    ):
        load("german", data_home=german_with(tmp_path, 3, 20, "3"), download=False)


def test_a_header_line_in_diabetes_names_line_1(tmp_path: Path) -> None:
    text = (
        "preg,plas,pres,skin,insu,mass,pedi,age,class\n"
        + TEMPLATES["diabetes"]["pima-indians-diabetes.csv"]
    )
    home = home_with(
        tmp_path, "diabetes", "pima_diabetes", {"pima-indians-diabetes.csv": text.encode()}
    )
    with pytest.raises(
        DataFormatError,
        match=r"line 1, column 'pregnancies': 'preg' is not a "
        r"finite number; expected a finite number \(this file has no header line\)",
    ):
        load("diabetes", data_home=home, download=False)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (
            "maybe\thello\nham\thi\n",
            r"line 1, column 'label': label 'maybe'; expected one of 'ham', "
            r"'spam' \(this file has no header line\)",
        ),
        ("ham\thi\nspam no tab here\n", r"line 2: no tab in the line; expected 'label<TAB>text'"),
        ("", r"SMSSpamCollection: the file is empty"),
        ("ham\tcaf\xe9\n", r"line 1: byte 0xe9 is not valid utf-8 .*; expected utf-8 text"),
    ],
    ids=["label", "no-tab", "empty", "latin-1"],
)
def test_sms_corruptions(tmp_path: Path, text: str, match: str) -> None:
    data = text.encode("latin-1")
    home = home_with(tmp_path, "sms_spam", "sms_spam", {"SMSSpamCollection": data})
    with pytest.raises(DataFormatError, match=match):
        load("sms_spam", data_home=home, download=False)


def test_a_utf16_file_names_the_encoding(tmp_path: Path) -> None:
    data = TEMPLATES["sms_spam"]["SMSSpamCollection"].encode("utf-16")
    home = home_with(tmp_path, "sms_spam", "sms_spam", {"SMSSpamCollection": data})
    with pytest.raises(DataFormatError, match=r"line 1: the file looks UTF-16 encoded .*re-save"):
        load("sms_spam", data_home=home, download=False)


def test_guide_label_7_is_an_error(tmp_path: Path) -> None:
    text = TEMPLATES["guide"]["svmguide1"].replace("1 1:1.7259", "7 1:1.7259")
    home = home_with(tmp_path, "guide", "svmguide1", {"svmguide1": text.encode()})
    with pytest.raises(DataFormatError, match=r"svmguide1, line 3, column 'label': '7'"):
        load("guide", data_home=home, download=False)
