"""The verdict module against brute force, SciPy and its own duality (test <-> CI)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

import osfb_gym.stats as v
from osfb_gym.stats import claims
from osfb_gym.stats.paired import min_p_paired, sign_flip_pvalues
from osfb_gym.stats.unpaired import permutation_pvalues
from osfb_gym.stats.verdicts import N_RESAMPLES


def brute_sign_flip(d: np.ndarray) -> float:
    """Twice the smaller one-sided p over all 2^n sign patterns, by enumeration."""
    signs = np.array(list(itertools.product([1.0, -1.0], repeat=d.size)))
    flipped, observed = signs @ d, d.sum()
    upper = np.mean(flipped >= observed - 1e-12)
    lower = np.mean(flipped <= observed + 1e-12)
    return min(1.0, 2 * min(upper, lower))


def brute_permutation(x: np.ndarray, y: np.ndarray) -> float:
    pooled = np.concatenate([x, y])
    sums = np.array(
        [pooled[list(c)].sum() for c in itertools.combinations(range(pooled.size), x.size)]
    )
    upper = np.mean(sums >= x.sum() - 1e-12)
    lower = np.mean(sums <= x.sum() + 1e-12)
    return min(1.0, 2 * min(upper, lower))


@pytest.mark.parametrize("seed", range(4))
def test_sign_flip_p_equals_enumeration_and_scipy(seed):
    rng = np.random.default_rng(seed)
    d = rng.normal(0.3, 1.0, size=9)
    ties = rng.integers(-2, 3, size=9).astype(float)  # zeros and equal magnitudes
    for sample in (d, ties):
        assert sign_flip_pvalues(sample) == pytest.approx(brute_sign_flip(sample), abs=1e-12)
    # SciPy's exact paired permutation test of the mean, one-sided each way
    one = [
        stats.permutation_test(
            (d,), np.mean, permutation_type="samples", alternative=side, n_resamples=np.inf
        ).pvalue
        for side in ("greater", "less")
    ]
    assert sign_flip_pvalues(d) == pytest.approx(min(1.0, 2 * min(one)), rel=1e-9)


def test_sign_flip_vectorised_rows_equal_single_calls():
    rows = np.random.default_rng(5).normal(size=(6, 7))
    assert sign_flip_pvalues(rows).tolist() == [float(sign_flip_pvalues(r)) for r in rows]


def test_monte_carlo_p_is_close_to_exact_and_states_its_error():
    d = np.random.default_rng(2).normal(0.5, 1.0, size=14)
    exact = float(sign_flip_pvalues(d))
    mc = float(sign_flip_pvalues(d, exact=False, n_resamples=20_000, seed=1))
    error = math.sqrt(exact * (1 - exact) / 20_000)
    assert abs(mc - exact) <= 2 * 4 * error  # two one-sided estimates doubled
    verdict = v.paired(np.arange(30.0) + 1, np.arange(30.0), lower_is_better=True)
    assert "Monte Carlo" in verdict.test and verdict.mc_error > 0
    # the Monte-Carlo p-value never falls below 2 / (B + 1): no false certainty
    assert verdict.p_value >= 2 / (N_RESAMPLES + 1) - 1e-15


@pytest.mark.parametrize("seed", range(3))
def test_permutation_p_equals_enumeration_and_scipy(seed):
    rng = np.random.default_rng(seed)
    x, y = rng.normal(0.5, 1, 6), rng.normal(0, 1, 5)
    assert permutation_pvalues(x, y) == pytest.approx(brute_permutation(x, y), abs=1e-12)
    one = [
        stats.permutation_test(
            (x, y),
            lambda a, b, axis: a.mean(axis) - b.mean(axis),
            permutation_type="independent",
            alternative=side,
            n_resamples=np.inf,
            vectorized=True,
        ).pvalue
        for side in ("greater", "less")
    ]
    assert permutation_pvalues(x, y) == pytest.approx(min(1.0, 2 * min(one)), rel=1e-9)
    ties_x, ties_y = rng.integers(0, 3, 5).astype(float), rng.integers(0, 3, 5).astype(float)
    assert permutation_pvalues(ties_x, ties_y) == pytest.approx(
        brute_permutation(ties_x, ties_y), abs=1e-12
    )


def _p_shifted(verdict_fn, a, b, shift):
    return verdict_fn(np.asarray(a) - shift, b).p_value


@pytest.mark.parametrize("paired_runs", [True, False])
@pytest.mark.parametrize("n", [7, 12, 25])
def test_ci_is_the_test_inverted(paired_runs, n):
    """Just inside the CI the test keeps the shift, just outside it rejects."""
    rng = np.random.default_rng(n)
    a, b = rng.normal(0.4, 1, n), rng.normal(0, 1, n)

    def compare(x, y):
        how = v.paired if paired_runs else v.unpaired
        return how(x, y, lower_is_better=True, n_resamples=4000)

    verdict = compare(a, b)
    assert verdict.low <= verdict.effect <= verdict.high
    width = verdict.high - verdict.low
    for end, inward in ((verdict.low, 1), (verdict.high, -1)):
        assert _p_shifted(compare, a, b, end + inward * 1e-7 * width) > verdict.alpha
        assert _p_shifted(compare, a, b, end - inward * 1e-3 * width) <= verdict.alpha


def test_zero_in_ci_exactly_when_the_test_does_not_reject():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(6, 13))
        d = rng.normal(rng.uniform(-1, 1), 1, n)
        verdict = v.paired(d, np.zeros(n), lower_is_better=True)
        assert (verdict.low <= 0 <= verdict.high) == (verdict.winner is None)


def test_five_pairs_never_name_a_winner_and_say_so():
    assert min_p_paired(5) == 0.0625
    verdict = v.paired([1, 2, 3, 4, 5], [11, 12, 13, 14, 15], lower_is_better=True)
    assert verdict.p_value == 0.0625 and verdict.winner is None and not verdict.can_reject
    assert verdict.text.startswith("cannot tell: ")  # not "tie": no test result could win
    assert "too few runs to ever name a winner (smallest p 0.0625 > 0.05)" in verdict.text
    # the interval shown is the highest-level exact one 5 pairs give: the range, 30/32
    assert (verdict.low, verdict.high, verdict.level) == (-10.0, -10.0, 1 - 2 / 32)
    assert "0.9375 CI" in verdict.text
    # six pairs can: 2 / 64 < 0.05
    six = v.paired(range(6), np.arange(6) + 1.5, lower_is_better=True)
    assert six.winner == "A" and six.can_reject and six.text.startswith("A lower than B")


def test_winner_follows_direction():
    low = [1.0, 2.0, 1.5, 1.2, 1.1, 1.9, 1.4, 1.3]
    high = [x + 1 for x in low]
    assert v.paired(low, high, lower_is_better=True, names=("L", "H")).winner == "L"
    assert v.paired(low, high, lower_is_better=False, names=("L", "H")).winner == "H"
    text = v.paired(low, high, lower_is_better=False, names=("L", "H")).text
    assert text.startswith("H higher than L: L - H = -1")


def test_wilcoxon_matches_scipy_and_its_interval_holds_the_hodges_lehmann_shift():
    d = np.random.default_rng(3).normal(0.8, 1, 12)
    verdict = v.paired(d, np.zeros(12), lower_is_better=True, test="wilcoxon")
    assert verdict.p_value == pytest.approx(stats.wilcoxon(d, method="exact").pvalue)
    walsh = [(d[i] + d[j]) / 2 for i in range(12) for j in range(i, 12)]
    assert verdict.effect == pytest.approx(np.median(walsh))
    assert verdict.low <= verdict.effect <= verdict.high
    inside = stats.wilcoxon(d - (verdict.low + 1e-9), method="exact").pvalue
    outside = stats.wilcoxon(d - (verdict.low - 1e-3), method="exact").pvalue
    assert inside > 0.05 >= outside
    assert v.paired([1, 2], [1, 2], lower_is_better=True, test="wilcoxon").p_value == 1.0


def test_mann_whitney_matches_scipy_exact():
    rng = np.random.default_rng(4)
    x, y = rng.normal(1, 1, 7), rng.normal(0, 1, 8)
    verdict = v.unpaired(x, y, lower_is_better=True, test="mann-whitney")
    assert verdict.p_value == pytest.approx(stats.mannwhitneyu(x, y, method="exact").pvalue)
    assert verdict.effect == pytest.approx(np.median(np.subtract.outer(x, y)))
    assert verdict.low <= verdict.effect <= verdict.high
    assert verdict.min_p == pytest.approx(2 / math.comb(15, 7))


def test_holm_by_hand():
    # sorted 0.01, 0.03, 0.04 -> 3 x 0.01, 2 x 0.03, max(0.06, 1 x 0.04)
    assert v.holm([0.04, 0.01, 0.03]).tolist() == pytest.approx([0.06, 0.03, 0.06])
    assert v.holm([0.5, 0.9]).tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="p_values"):
        v.holm([0.1, 1.5])


def test_best_of_clear_and_tied():
    base = np.arange(10.0)
    clear = v.best_of({"A": base, "B": base + 1, "C": base + 2}, lower_is_better=True)
    assert clear.clear and clear.text == "clearly lowest: A"
    tied = v.best_of({"A": base, "B": base + 1, "C": base + [0.1, -0.1] * 5}, lower_is_better=True)
    assert tied.best == "A" and tied.tied == ["C"] and not tied.clear
    assert tied.text == "tied for lowest: A with C"
    high = v.best_of({"A": base, "B": base + 1}, lower_is_better=False)
    assert high.text == "clearly highest: B"
    few = v.best_of({"A": base[:5], "B": base[:5] + 1}, lower_is_better=True)
    assert few.untestable == ["B"]
    assert few.text == (
        "cannot tell the lowest: A (best mean) against B; too few runs to ever name a winner"
    )


def test_best_of_separates_a_tie_from_a_comparison_that_could_never_reject():
    """Unpaired, 10 + 1 runs reach p = 2/11 at best: never below 0.05."""
    base = np.arange(10.0)
    cell = v.best_of(
        {"A": base, "B": base + [0.2, -0.2] * 5, "C": [20.0]},
        lower_is_better=True,
        paired_runs=False,
    )
    assert cell.tied == ["B", "C"] and cell.untestable == ["C"]
    assert cell.text == (
        "tied for lowest: A with B; cannot tell against C (too few runs to ever name a winner)"
    )
    page = v.Page()
    page.add_best(cell)
    assert "or 'cannot tell' where the runs are too few" in page.sentence
    calm = v.Page()
    calm.add(v.paired(base, base + 1, lower_is_better=True))
    assert "cannot tell" not in calm.sentence


def test_page_applies_holm_over_all_its_verdicts():
    rng = np.random.default_rng(0)
    strong = v.paired(np.arange(12.0), np.arange(12.0) + 1, lower_is_better=True)
    d = np.array([1.0, 1.2, 0.8, -0.9, 1.1, 0.9, 1.3, -0.8, 0.7, 1.0])  # p = 44 / 1024
    weak = v.paired(d, np.zeros(10), lower_is_better=True)
    assert weak.winner == "B" and 0.01 < weak.p_value <= 0.05  # alone: a winner
    page = v.Page()
    first, second = page.add(strong), page.add(weak)
    for _ in range(3):
        page.add(v.paired(rng.normal(size=10), rng.normal(size=10), lower_is_better=True))
    cell = page.add_best(
        v.best_of({"X": np.arange(12.0), "Y": np.arange(12.0) + 1}, lower_is_better=True)
    )
    assert page.size == 6
    verdicts = page.verdicts
    assert verdicts[first].winner == "A" and verdicts[first].family_size == 6
    assert verdicts[second].winner is None  # 6 x p > 0.05 on this page
    assert "Holm over 6" in verdicts[second].text
    assert page.bests[cell].clear
    assert "Holm's correction over the page's 6 comparisons" in page.sentence
    assert page.tally("X") == "clearly lowest in 1 of 1 cells, tied for lowest in 0"
    with pytest.raises(ValueError, match="alpha"):
        page.add(v.paired(d, np.zeros(10), lower_is_better=True, alpha=0.1))


def test_a_tally_tells_ties_from_cells_too_small_to_tell():
    gap = {"A": np.zeros(12), "B": np.full(12, 5.0), "C": np.zeros(12)}
    page = v.Page()
    page.add_best(v.best_of(gap, lower_is_better=True))  # A with C: a tie it could reject
    few = page.add_best(v.best_of({"A": np.zeros(3), "B": np.ones(3)}, lower_is_better=True))
    assert page.bests[few].reading("A") == page.bests[few].reading("B") == "cannot tell"
    assert page.bests[0].reading("B") is None and page.bests[0].reading("C") == "tied"
    assert page.tally("A") == (
        "clearly lowest in 0 of 2 cells, tied for lowest in 1, cannot tell in 1 (too few runs)"
    )
    assert page.tally("C") == "clearly lowest in 0 of 2 cells, tied for lowest in 1"


@pytest.mark.parametrize("size", [2, 18, 25, 26, 130])
def test_a_page_too_large_for_its_pairs_says_so(size):
    """10 pairs reach p = 2/1024 at best: Holm over m > 25 can never pass 0.05."""
    page = v.Page()
    for _ in range(size):  # every comparison as separated as 10 pairs get
        page.add(v.paired(np.arange(10.0), np.arange(10.0) + 5, lower_is_better=True))
    verdicts = page.verdicts
    reachable = size * 2 / 1024 <= 0.05
    assert all(x.can_reject == reachable for x in verdicts)
    assert all((x.winner == "A") == reachable for x in verdicts)  # the best case decides
    if not reachable:
        assert f"after Holm over {size} > 0.05)" in verdicts[0].text
        assert claims.read(verdicts[:1], ["A"]) == claims.cannot_tell(10)
    else:
        assert claims.read(verdicts[:1], ["A"]) == claims.REPRODUCED


def test_can_reject_is_holm_at_every_floor():
    """Exact for mixed sizes: a verdict can reject iff it does with every p at its floor."""
    rng = np.random.default_rng(3)
    for _ in range(30):
        sizes = rng.integers(5, 12, size=int(rng.integers(2, 30)))
        page = v.Page()
        for n in sizes:  # each at its floor: fully separated
            page.add(v.paired(np.zeros(n), np.ones(n), lower_is_better=True))
        for verdict in page.verdicts:
            assert verdict.can_reject == (verdict.winner is not None)
            assert verdict.floor == pytest.approx(verdict.p)


def test_place_groups_references():
    mine = np.arange(10.0)
    found = v.place(
        mine,
        {"Worse": mine + 1, "Same": mine + [0.1, -0.1] * 5, "Better": mine - 1},
        lower_is_better=True,
        name="yours",
    )
    assert (found.better, found.tied, found.worse) == (["Worse"], ["Same"], ["Better"])
    assert found.sentence.startswith("better than Worse; a tie with Same (within noise); worse")
    assert "Holm over 3 references" in found.sentence
    assert "too few" in v.place(mine[:5], {"R": mine[:5] + 1}, lower_is_better=True).sentence


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="one value per pair"):
        v.paired([1, 2, 3], [1, 2], lower_is_better=True)
    with pytest.raises(ValueError, match="non-finite"):
        v.paired([1, np.nan], [1, 2], lower_is_better=True)
    with pytest.raises(TypeError, match="lower_is_better"):
        v.paired([1, 2], [1, 2], lower_is_better="yes")
    with pytest.raises(ValueError, match="alpha"):
        v.unpaired([1, 2], [1, 2], lower_is_better=True, alpha=1.5)
    with pytest.raises(ValueError, match="test"):
        v.unpaired([1, 2], [1, 2], lower_is_better=True, test="t")
    with pytest.raises(TypeError, match="names"):
        v.paired([1, 2], [1, 2], lower_is_better=True, names=("A",))
    with pytest.raises(ValueError, match="n_resamples"):
        v.paired([1, 2], [1, 2], lower_is_better=True, n_resamples=5)
    with pytest.raises(ValueError, match="values"):
        v.best_of({"A": [1.0]}, lower_is_better=True)
    with pytest.raises(ValueError, match="a must be 1-D"):
        v.paired([[1, 2]], [1, 2], lower_is_better=True)


def test_importing_the_verdicts_loads_no_bench_engine():
    # the grader imports this module: it must not pull pandas, sklearn or the bench in
    import subprocess
    import sys

    code = (
        "import sys, osfb_gym.stats; "
        "print([m for m in ('pandas', 'sklearn', 'torch', 'osfb_gym.bench') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_rank_tests_report_the_level_of_their_alpha():
    d = np.array([0.3, -0.1, 0.5, 0.8, 0.2, 0.9, 0.4, 0.7, -0.2, 0.6])
    wide = v.paired(d, np.zeros(10), lower_is_better=True, test="wilcoxon", alpha=0.1)
    narrow = v.unpaired(d, -d, lower_is_better=True, test="mann-whitney", alpha=0.01)
    assert wide.level == pytest.approx(0.9) and narrow.level == pytest.approx(0.99)
