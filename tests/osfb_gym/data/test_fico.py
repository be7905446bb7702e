"""The FICO TransRisk loader: the real tables when ``OSFB_DATA`` has them, generated ones always."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from osfb_gym.data import DataFormatError, DatasetNotFoundError, load
from osfb_gym.data.fico import FICO_FILES, FicoTables, read_fico, transrisk_to_fico
from tests.helpers import needs_osfb_data, osfb_data

HEADER = "Score,Non- Hispanic white,Black,Hispanic,Asian"
CDF = ["0,10,40,20,5", "50,60,90,70,50", "100,100,100,100,100"]
PERFORMANCE = ["0,90,95,92,80", "50,10,20,15,8", "100,1,2,1,1"]
TOTALS = ["Kind,Non- Hispanic white,Black,Hispanic,Asian", "SSA,100,20,15,8"]


def write_tables(
    root: Path, cdf: list[str] = CDF, performance: list[str] = PERFORMANCE, totals=TOTALS
) -> Path:
    folder = root / "fico"
    folder.mkdir(parents=True, exist_ok=True)
    cdf_file, performance_file, totals_file = (folder / name for name in FICO_FILES)
    cdf_file.write_text("\n".join([HEADER, *cdf]) + "\n")
    performance_file.write_text("\n".join([HEADER, *performance]) + "\n")
    totals_file.write_text("\n".join(totals) + "\n")
    return folder


def test_generated_tables_load_with_repayment_as_one_minus_the_defaulters(tmp_path):
    write_tables(tmp_path)
    tables = load("fico", data_home=tmp_path, download=False)
    assert isinstance(tables, FicoTables)
    assert tables.groups == ("White", "Black", "Hispanic", "Asian")
    assert tables.scores.tolist() == [0.0, 50.0, 100.0]
    np.testing.assert_allclose(tables.repay[1], [0.05, 0.80, 0.98])
    np.testing.assert_allclose(tables.pmf()[1], [0.4, 0.5, 0.1])
    assert tables.totals.tolist() == [100, 20, 15, 8]
    assert not tables.cdf.flags.writeable and not tables.repay.flags.writeable
    assert load("transrisk", data_home=tmp_path, download=False) is tables
    assert tables.index(["Black", "White"]) == [1, 0]
    with pytest.raises(ValueError, match="groups must be names among White, Black"):
        tables.index(["Martian"])


@pytest.mark.parametrize(
    ("which", "lines", "message"),
    [
        ("cdf", ["0,10,40,20,5", "50,60,30,70,50", "100,100,100,100,100"], "never decreases"),
        ("cdf", ["0,10,40,20,5", "50,60,90,70,50", "100,100,99,100,100"], "100 .the whole group"),
        ("cdf", ["0,10,40,20,5", "50,60,90,70,50", "100,100,100,100,120"], "percentage in"),
        ("cdf", ["0,10,40,20,5", "0,60,90,70,50", "100,100,100,100,100"], "strictly increasing"),
        ("cdf", ["0,10,40,20,5", "50,60,90,70,50", "101,100,100,100,100"], r"\[0, 100\]"),
        ("performance", ["0,90,95,92,80", "50,10,20,15,x", "100,1,2,1,1"], "finite number"),
        ("performance", ["0,90,95,92,80", "50,10,-2,15,8", "100,1,2,1,1"], "percentage in"),
        ("performance", ["0,90,95,92,80", "60,10,20,15,8", "100,1,2,1,1"], "score grid"),
        ("performance", ["0,90,95,92,80", "100,1,2,1,1"], "score grid"),
    ],
)
def test_a_corrupt_table_raises_naming_the_file_line_and_column(tmp_path, which, lines, message):
    kwargs = {"cdf": lines} if which == "cdf" else {"performance": lines}
    folder = write_tables(tmp_path, **kwargs)
    name = FICO_FILES[0] if which == "cdf" else FICO_FILES[1]
    with pytest.raises(DataFormatError, match=message) as error:
        read_fico([folder / file for file in FICO_FILES])
    assert name in str(error.value) and "line" in str(error.value)


@pytest.mark.parametrize(
    ("totals", "message"),
    [
        (["Kind,Non- Hispanic white,Black,Hispanic,Asian", "XYZ,1,2,3,4"], "no row SSA"),
        (["Kind,Non- Hispanic white,Black,Hispanic,Asian", "SSA,1,2.5,3,4"], "whole number"),
        (["Kind,Non- Hispanic white,Black,Hispanic,Asian", "SSA,1,0,3,4"], "whole number"),
        (["Kind,White,Black,Hispanic,Asian", "SSA,1,2,3,4"], "no column 'Non- Hispanic white'"),
    ],
)
def test_bad_totals_raise_naming_the_file(tmp_path, totals, message):
    folder = write_tables(tmp_path, totals=totals)
    with pytest.raises(DataFormatError, match=message) as error:
        read_fico([folder / file for file in FICO_FILES])
    assert "totals.csv" in str(error.value)


def test_a_missing_header_column_and_an_empty_file_are_named(tmp_path):
    folder = write_tables(tmp_path)
    (folder / FICO_FILES[0]).write_text("Score,White\n0,1\n")
    with pytest.raises(DataFormatError, match="no column 'Non- Hispanic white'"):
        read_fico([folder / file for file in FICO_FILES])
    (folder / FICO_FILES[0]).write_text("")
    with pytest.raises(DataFormatError, match="empty"):
        read_fico([folder / file for file in FICO_FILES])


def test_missing_tables_are_reported_with_where_to_put_them(tmp_path):
    with pytest.raises(DatasetNotFoundError, match="totals.csv"):
        load("fico", data_home=tmp_path / "nowhere", download=False)


def test_transrisk_scores_map_onto_the_fico_range_monotonically():
    grid = np.linspace(0, 100, 201)
    fico = transrisk_to_fico(grid)
    assert fico[0] == 300.0 and fico[-1] == 850.0 and np.all(np.diff(fico) > 0)


@needs_osfb_data("fico")
def test_the_real_tables_are_liu_et_als():
    """198 scores, four groups; the means Liu et al.'s FICO experiment starts from."""
    root = osfb_data("fico")
    tables = load("fico", data_home=str(root))
    assert tables.scores.shape == (198,) and tables.cdf.shape == tables.repay.shape == (4, 198)
    assert tables.totals.tolist() == [133165, 18274, 14702, 7906]
    np.testing.assert_allclose(tables.pmf().sum(axis=1), 1.0)
    # repayment rises from near 0 at score 0 to near 1 at 100, for every group
    assert np.all(tables.repay[:, 0] < 0.06) and np.all(tables.repay[:, -1] > 0.99)
    means = tables.pmf() @ transrisk_to_fico(tables.scores)
    black, white = tables.index(["Black", "White"])
    assert 500 < means[black] < 530 and 640 < means[white] < 660
