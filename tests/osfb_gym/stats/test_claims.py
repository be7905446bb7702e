"""A paper's claim read from its verdicts: the four readings, counts, CIs, calibration."""

from __future__ import annotations

import numpy as np
import pytest

from osfb_gym.stats import ALPHA, Page, paired
from osfb_gym.stats import claims as c
from osfb_gym.stats.calibration import bound

RNG = np.random.default_rng(34)


def verdict(n: int, shift: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=n)
    return paired(base + shift + 0.01 * rng.normal(size=n), base, lower_is_better=True,
                  names=("A", "B"))  # fmt: skip


def test_the_four_readings():
    assert c.read([verdict(10, -1.0)], ["A"]) == c.REPRODUCED
    assert c.read([verdict(10, +1.0)], ["A"]) == c.NOT_REPRODUCED
    assert c.read([verdict(10, 0.0)], ["A"]) == c.TIE
    assert c.read([verdict(5, -1.0)], ["A"]) == "cannot tell at n=5"
    # all parts must hold; one part the other way decides
    assert c.read([verdict(10, -1.0), verdict(10, 0.0)], ["A", "A"]) == c.TIE
    assert c.read([verdict(10, -1.0), verdict(10, 1.0)], ["A", "A"]) == c.NOT_REPRODUCED


def test_bad_claims_are_refused():
    with pytest.raises(ValueError, match="non-empty"):
        c.read([], [])
    with pytest.raises(ValueError, match="neither"):
        c.read([verdict(10, -1.0)], ["C"])
    with pytest.raises(ValueError, match="must not be empty"):
        c.combine([])


def test_within_a_margin_reads_the_ci():
    close = verdict(12, -0.001)
    assert c.at_least(close, -0.5) == c.REPRODUCED
    assert c.at_least(verdict(12, -1.0), -0.5) == c.NOT_REPRODUCED
    assert c.at_least(verdict(5, -0.001), -0.5) == "cannot tell at n=5"  # 93.75% at most


def test_counts_say_clear_undecided_and_opposite():
    reading, sentence = c.count([c.REPRODUCED] * 3 + [c.TIE, c.NOT_REPRODUCED], 3)
    assert reading == c.REPRODUCED
    assert sentence == "clearly in 3 of 5, undecided in 1, opposite in 1"
    assert c.count([c.REPRODUCED, c.NOT_REPRODUCED, c.NOT_REPRODUCED], 2)[0] == c.NOT_REPRODUCED
    assert c.count([c.REPRODUCED, "cannot tell at n=5", c.TIE], 2)[0] == "cannot tell at n=5"


@pytest.mark.parametrize("n", [6, 10])
def test_a_null_claim_reads_reproduced_at_most_half_alpha(n):
    # the claim names a side, so only one tail of the two-sided test counts
    trials = 300
    rng = np.random.default_rng(n)
    hits = 0
    for _ in range(trials):
        shared = rng.normal(size=n)
        found = paired(shared + rng.normal(size=n), shared + rng.normal(size=n),
                       lower_is_better=True, names=("A", "B"), n_resamples=1000)  # fmt: skip
        hits += c.read([found], ["A"]) == c.REPRODUCED
    assert hits / trials <= bound(ALPHA / 2, trials)


def test_a_page_of_null_claims_reads_any_reproduced_at_most_alpha():
    trials, claims = 150, 8
    rng = np.random.default_rng(1)
    any_hit = 0
    for _ in range(trials):
        page = Page()
        for _ in range(claims):
            page.add(paired(rng.normal(size=10), rng.normal(size=10), lower_is_better=True,
                            names=("A", "B"), n_resamples=1000))  # fmt: skip
        readings = [c.read([v], ["A"]) for v in page.verdicts]
        any_hit += c.REPRODUCED in readings
    assert any_hit / trials <= bound(ALPHA, trials)


def test_a_cell_reads_its_clear_best_or_why_not():
    from osfb_gym.stats import best_of

    base = np.arange(10.0)
    clear = best_of({"A": base, "B": base + 1, "C": base + 2}, lower_is_better=True)
    assert c.read_best(clear, "A") == c.REPRODUCED and c.read_best(clear, "B") == c.NOT_REPRODUCED
    tied = best_of({"A": base, "B": base + RNG.normal(0, 1, 10)}, lower_is_better=True)
    assert not tied.clear and c.read_best(tied, "A") == c.TIE
    small = best_of({"A": base[:5], "B": base[:5] + 1}, lower_is_better=True)
    assert c.read_best(small, "A") == "cannot tell at n=5"


def test_the_ci_text_shifts_the_interval_and_names_a_level_below_95():
    at_ten = verdict(10, -1.0)
    assert c.ci_text(at_ten).startswith(f"{at_ten.effect:+.3f} [{at_ten.low:.3g}, ")
    assert "CI" not in c.ci_text(at_ten)
    shifted = c.ci_text(at_ten, -0.1)
    assert shifted.startswith(f"{at_ten.effect - 0.1:+.3f} [{at_ten.low - 0.1:.3g}, ")
    assert c.ci_text(verdict(5, -1.0)).endswith("(0.9375 CI)")
