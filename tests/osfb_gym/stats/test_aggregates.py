"""The statistics of the RL comparison, checked against cases computed by hand."""

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from osfb_gym.stats import aggregates as stats


def test_iqm_is_the_mean_of_the_middle_half():
    assert stats.iqm([1, 2, 3, 4, 5, 6, 7, 100]) == pytest.approx(4.5)  # (3+4+5+6)/4
    # over runs and tasks together: the middle half of all eight values
    assert stats.iqm(np.array([[1, 5], [2, 6], [3, 7], [4, 100]])) == pytest.approx(4.5)


def test_mean_ci_of_two_points_is_their_range():
    # resampled means of [0, 1] are 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4:
    # the 2.5% and 97.5% percentiles are 0 and 1
    value, low, high = stats.interval([0.0, 1.0], "mean", reps=4000)
    assert (value, low, high) == (0.5, 0.0, 1.0)


def test_bootstrap_is_stratified_by_task():
    # task A = [0, 1], task B = [10, 10]: resampling within tasks gives means
    # (a* + 20) / 4 with a* in {0, 1, 2}, so 5, 5.25 or 5.5; pooled resampling
    # of all four runs could give anything from 0 to 10
    value, low, high = stats.interval(np.array([[0.0, 10.0], [1.0, 10.0]]), "mean", reps=4000)
    assert value == pytest.approx(5.25)
    assert (low, high) == (pytest.approx(5.0), pytest.approx(5.5))


def test_constant_scores_have_a_point_ci_and_one_run_has_none():
    assert stats.interval([2.0, 2.0, 2.0], "iqm") == (2.0, 2.0, 2.0)
    value, low, high = stats.interval([3.0], "mean")
    assert value == 3.0 and np.isnan(low) and np.isnan(high)


def test_probability_of_improvement_by_hand_and_against_mann_whitney():
    x, y = [1.0, 2.0, 3.0], [0.0, 0.0, 4.0]
    # higher is better: 1, 2, 3 each beat both zeros: 6 of 9 pairs
    assert stats.probability_of_improvement(x, y)[0] == pytest.approx(6 / 9)
    # lower is better: only the pairs with 4: 3 of 9
    assert stats.probability_of_improvement(x, y, lower_is_better=True)[0] == pytest.approx(3 / 9)
    u = mannwhitneyu(x, y, alternative="greater").statistic
    assert stats.probability_of_improvement(x, y)[0] == pytest.approx(u / 9)
    # ties count one half; tasks are averaged
    assert stats.probability_of_improvement([[1.0, 0.0]], [[1.0, 1.0]])[0] == pytest.approx(0.25)


def test_probability_of_improvement_ci_brackets_and_decides():
    better, worse = np.arange(5.0), np.arange(5.0) + 10
    p, low, high = stats.probability_of_improvement(better, worse, lower_is_better=True)
    assert (p, low, high) == (1.0, 1.0, 1.0)
    p, low, high = stats.probability_of_improvement([0.0, 2.0, 4.0], [1.0, 3.0, 5.0])
    assert low <= p <= high and low < 0.5 < high


def test_performance_profile_by_hand():
    scores = [[0.0], [0.5], [1.0], [2.0]]
    value, low, high = stats.performance_profile(scores, [0.5, 1.5], lower_is_better=True)
    assert value.tolist() == [0.5, 0.75]
    assert np.all(low <= value) and np.all(value <= high)
    # higher is better (rliable's convention): the fraction strictly above tau
    assert stats.performance_profile(scores, [0.5])[0].tolist() == [0.5]


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="statistic"):
        stats.interval([1.0, 2.0], "median")
    with pytest.raises(ValueError, match="non-finite"):
        stats.interval([1.0, np.nan])
    with pytest.raises(ValueError, match="same tasks"):
        stats.probability_of_improvement(np.zeros((3, 2)), np.zeros((3, 1)))
