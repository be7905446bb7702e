"""The shared page of claims: comparisons paired by seed, Holm over the page, read at the end."""

from __future__ import annotations

import numpy as np
import pandas as pd

from osfb_gym.bench.suites.claims import ClaimsPage, by_seed, verdict_table


def series(values, seeds=None) -> pd.Series:
    return pd.Series(values, index=range(len(values)) if seeds is None else seeds)


def test_runs_are_paired_on_the_seeds_both_have_in_seed_order():
    a = series([1.0, 2.0, 3.0], seeds=[2, 0, 1])
    b = series([10.0, np.nan, 30.0, 40.0], seeds=[0, 1, 2, 3])
    x, y = by_seed(a, b)
    assert x.tolist() == [2.0, 1.0] and y.tolist() == [10.0, 30.0]  # seeds 0 and 2


def test_a_claim_is_read_after_holm_over_the_whole_page():
    rng = np.random.default_rng(0)
    base = rng.normal(size=8)
    lower = series(base), series(base + 1 + 0.01 * rng.normal(size=8))  # p = 2/256 alone
    page = ClaimsPage()
    i = page.compare(*lower, ("A", "B"), lower_is_better=True)
    page.add("A beats B", "A lower", lambda found: f"p {found[i].p:.3f}", page.reads([i], ["A"]))
    alone = page.resolve()[0]
    assert alone.verdict == "reproduced" and alone.holds and alone.measured == "p 0.008"
    for _ in range(4):  # four null comparisons join the family: Holm multiplies p by 5
        noise = rng.normal(size=8)
        page.compare(series(noise), series(noise + rng.normal(size=8)), ("C", "D"),
                     lower_is_better=True)  # fmt: skip
    shared = page.resolve()[0]
    assert shared.verdict == "reproduced" and shared.measured == "p 0.039"
    for _ in range(5):  # ten in all: 10 x 2/256 > 0.05, no claim on the page can ever pass
        noise = rng.normal(size=8)
        page.compare(series(noise), series(noise + 1), ("E", "F"), lower_is_better=True)
    crowded = page.resolve()[0]
    assert crowded.verdict == "cannot tell at n=8" and not crowded.holds
    assert crowded.measured == "p 0.078"


def test_checks_of_ours_and_counts_read_yes_or_no():
    page = ClaimsPage()
    page.add("a check of ours", None, "none", "no")
    page.add("a count the paper states", "3 of 4", "3 of 4", "yes")
    check, stated = page.resolve()
    assert (check.verdict, check.holds) == ("- (does not hold)", False)
    assert (stated.verdict, stated.holds) == ("yes", True)
    table = verdict_table([check, stated])
    header = [column.strip() for column in table.splitlines()[0].split("|")[1:-1]]
    assert header == ["claim", "paper", "measured", "verdict", "why"]
    assert "| not stated " in table
