"""Q² Tables 4 and 6 on hand cases: the system-level simulation (Spearman over simulated systems) and the
turn-level correlations with human ratings."""
import numpy as np
import pytest

from tfc.book.chapters.qgqa import Q2_T4_LEVELS, system_corr_bootstrap, usr_correlations

N = 40


def test_a_perfect_metric_ranks_every_simulated_system_right():
    # consistent responses score 1, inconsistent 0: system score = 1 - level exactly, so rho = 1 every time
    rho = system_corr_bootstrap({"m": (np.ones(N), np.zeros(N))}, n_boot=50, n_draw=100)["m"]
    assert rho.shape == (50,) and np.allclose(rho, 1.0)


def test_a_reversed_metric_gives_minus_one_and_a_blind_one_zero():
    rho = system_corr_bootstrap({"rev": (np.zeros(N), np.ones(N)), "blind": (np.full(N, .3), np.full(N, .3))},
                                n_boot=20, n_draw=100)
    assert np.allclose(rho["rev"], -1.0)
    assert np.allclose(rho["blind"], 0.0)        # every system ties: defined as 0, never NaN


def test_values_are_five_point_spearman_steps_and_the_draws_are_seeded():
    rng = np.random.default_rng(1)
    g, b = rng.random(N), rng.random(N) * 0.9
    a = system_corr_bootstrap({"m": (g, b)}, n_boot=200, n_draw=60, seed=3)["m"]
    again = system_corr_bootstrap({"m": (g, b)}, n_boot=200, n_draw=60, seed=3)["m"]
    assert np.array_equal(a, again)
    assert np.allclose(np.round(a * 10), a * 10)   # 1 - sum(d^2)/20 with an even sum: multiples of 0.1
    assert -1 <= a.min() and a.max() <= 1


def test_every_metric_sees_the_same_draws():
    rng = np.random.default_rng(2)
    g, b = rng.random(N), rng.random(N)
    both = system_corr_bootstrap({"x": (g, b), "y": (g, b)}, n_boot=30, n_draw=50, seed=0)
    assert np.array_equal(both["x"], both["y"])


@pytest.mark.parametrize("kw, msg", [
    ({"levels": (0.1, 0.2)}, "at least 3"),
    ({"levels": (0.0, 0.1, 0.2)}, "in \\(0, 1\\)"),
    ({"n_boot": 0}, "positive"),
])
def test_bad_settings_are_refused(kw, msg):
    with pytest.raises(ValueError, match=msg):
        system_corr_bootstrap({"m": (np.ones(N), np.zeros(N))}, **kw)


def test_bad_arrays_are_refused():
    with pytest.raises(ValueError, match="same number"):
        system_corr_bootstrap({"m": (np.ones(N), np.zeros(N - 1))})
    with pytest.raises(ValueError, match="NaN"):
        system_corr_bootstrap({"m": (np.r_[np.nan, np.ones(N - 1)], np.zeros(N))})


def test_the_paper_levels():
    assert Q2_T4_LEVELS == (0.05, 0.10, 0.15, 0.20, 0.25)


def test_usr_correlations_by_hand():
    h, s = [0, 1, 2, 3], [0, 1, 2, 3]
    res = usr_correlations(h, s, covered=[1, 1, 1, 0])
    assert res[("spearman", "covered")][0] == pytest.approx(1.0) and res[("spearman", "covered")][2] == 3
    # zero-filled: y = [0, 1, 2, 0]; cov(x, y) = 0.5, var sums 5 and 2.75 -> r = 0.5 / sqrt(13.75)
    assert res[("pearson", "zero_filled")][0] == pytest.approx(0.5 / np.sqrt(13.75))
    assert res[("pearson", "zero_filled")][2] == 4
    every = usr_correlations(h, [3, 2, 1, 0])
    assert every[("spearman", "covered")][0] == pytest.approx(-1.0)


def test_usr_correlations_refuse_bad_input():
    with pytest.raises(ValueError, match="length"):
        usr_correlations([0, 1, 2], [0, 1])
    with pytest.raises(ValueError, match="NaN"):
        usr_correlations([0, 1, np.nan, 2], [0, 1, 2, 3])
    with pytest.raises(ValueError):
        usr_correlations([0, 1, 2, 3], [0, 1, 2, 3], covered=[1, 1, 0, 0])   # two covered pairs only
