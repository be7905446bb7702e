"""The shared report helpers: tables, claims, colours, curves, published numbers."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from osfb_gym.bench import report
from osfb_gym.bench.report import colours, plot_curves, tuned
from osfb_gym.bench.suites import tables
from osfb_gym.bench.suites.jiang import METHODS, published
from osfb_gym.bench.suites.tables import Claim, claims_table


def test_tuned_keeps_the_best_mean_per_setting_and_agent():
    frame = pd.DataFrame(
        {
            "setting": ["s"] * 4 + ["u"] * 4,
            "agent": "A",
            "seed": [0, 1] * 4,
            "params": [json.dumps({"alpha": a}) for a in (1, 1, 2, 2, 1, 1, 2, 2)],
            "loss": [3.0, 5.0, 1.0, 2.0, 1.0, 1.0, 4.0, 4.0],
        }
    )
    best = tuned(frame, "loss")
    assert best.groupby("setting")["chosen"].first().to_dict() == {"s": "alpha=2", "u": "alpha=1"}
    assert (
        tuned(frame, "loss", lower_is_better=False).groupby("setting")["chosen"].first()["s"]
        == "alpha=1"
    )


def test_claims_table_says_yes_no_or_not_stated():
    text = claims_table(
        [
            Claim("a", "A lower", "A 1 < B 2", True),
            Claim("b", "B lower", "A 1 < B 2", False, why="gamma shared"),
            Claim("c", None, "x", False),
        ]
    )
    lines = text.splitlines()
    header = [c.strip() for c in lines[0].split("|")[1:-1]]
    assert header == ["claim", "paper", "measured", "reproduced?", "why"]
    cells = [[c.strip() for c in line.split("|")[1:-1]] for line in lines[2:]]
    assert [c[3] for c in cells] == ["yes", "no", "- (does not hold)"]
    assert cells[1][4] == "gamma shared" and cells[2][1] == "not stated"


def test_colours_are_one_per_agent_in_order_and_distinct_past_ten():
    names = [f"a{i}" for i in range(25)]
    palette = colours(names + names[::-1])
    assert list(palette) == names and palette["a0"] == "C0" and palette["a9"] == "C9"
    assert len(set(palette.values())) == 25


def test_an_agent_has_the_same_colour_in_every_panel(tmp_path):
    t = np.arange(1, 6)
    curves = {
        ("left", "B"): (t, np.ones((2, 5))),
        ("left", "A"): (t, np.zeros((2, 5))),
        ("right", "A"): (t, np.zeros((2, 5))),
    }
    seen: dict[str, set[str]] = {}
    original = report.save

    def spy(figure, path, **kwargs):
        for axis in figure.axes:
            for line in axis.get_lines():
                seen.setdefault(line.get_label(), set()).add(line.get_color())
        return original(figure, path, **kwargs)

    report.save = spy  # type: ignore[assignment]
    try:
        path = plot_curves(curves, tmp_path / "c.png")
    finally:
        report.save = original  # type: ignore[assignment]
    assert path.stat().st_size > 0
    # A is the second agent overall: C1 in both panels, though it is the first in "right"
    assert seen == {"B": {"C0"}, "A": {"C1"}}


def test_published_numbers_come_from_the_shipped_csv():
    linear = published("linear")
    assert list(linear.columns) == list(METHODS) and linear.shape == (20, 7)
    assert linear.loc[("eeg", 0.5), "margin"] == 96.85
    assert published("logistic").loc[("churn", 0.7), "ours"] == 82.23
    with pytest.raises(ValueError, match="no published table 'nope'.*jiang_table1"):
        tables.published("nope")
    with pytest.raises(ValueError, match="link"):
        published("probit")


def test_save_report_writes_named_indexes_only_and_reads_tables_as_attributes(tmp_path):
    rows = pd.DataFrame({"agent": ["A", "B"], "loss": [1.0, 2.0]})
    means = rows.set_index("agent")
    saved = report.save_report(
        tmp_path / "out",
        "# page\n",
        {"rows": rows, "means": means},
        [tmp_path / "f.png"],
        note="kept",
    )
    assert (tmp_path / "out/report.md").read_text() == "# page\n"  # every run's page
    assert list(pd.read_csv(tmp_path / "out/rows.csv").columns) == ["agent", "loss"]
    assert list(pd.read_csv(tmp_path / "out/means.csv").columns) == ["agent", "loss"]
    assert [p.name for p in saved.files] == ["rows.csv", "means.csv", "report.md", "f.png"]
    assert saved.note == "kept" and saved.means is means
    assert str(saved).startswith("# page\n\nwritten: ") and str(saved).endswith("f.png")
    with pytest.raises(AttributeError, match="no table 'nope'"):
        saved.nope  # noqa: B018
