import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from core.sequences.forecast import ARModel, fit_ar, lag_matrix, make_series, mse_by_horizon, one_step_mse, predict_k_step


def test_series_shape_and_seed():
    a, b = make_series(1000, 0.2, 0), make_series(1000, 0.2, 0)
    assert a.shape == (1000,) and np.array_equal(a, b)
    assert not np.array_equal(a, make_series(1000, 0.2, 1))
    clean = make_series(50, 0.0, 3)
    np.testing.assert_allclose(clean, np.sin(0.01 * np.arange(1, 51)), rtol=0, atol=0)


def test_least_squares_equals_normal_equations():
    x = make_series(1000, 0.2, 0)
    model = fit_ar(x, 4, 600)
    feats, labels = lag_matrix(x[:600], 4)
    A = np.hstack([feats, np.ones((len(feats), 1))])
    theta = np.linalg.solve(A.T @ A, A.T @ labels)
    np.testing.assert_allclose(model.weights, theta[:-1], rtol=0, atol=1e-10)
    assert abs(model.bias - theta[-1]) < 1e-10


def test_recovers_true_ar_coefficients_without_noise():
    rng = np.random.default_rng(1)
    true_w, true_b = np.array([0.2, -0.3, 0.5]), 0.1
    x = list(rng.standard_normal(3))
    for _ in range(400):
        x.append(float(np.dot(true_w, x[-3:]) + true_b))
    model = fit_ar(np.array(x), 3, 300)
    np.testing.assert_allclose(model.weights, true_w, atol=1e-8)
    assert abs(model.bias - true_b) < 1e-8


def test_k1_is_one_step_prediction():
    x = make_series(300, 0.1, 2)
    model = fit_ar(x, 5, 200)
    p1 = predict_k_step(model, x, 1)
    feats, _ = lag_matrix(x, 5)
    np.testing.assert_allclose(p1[5:], feats @ model.weights + model.bias, atol=1e-12)
    assert np.all(np.isnan(p1[:5]))


def test_k_step_feeds_back_its_own_predictions():
    x = make_series(200, 0.3, 4)
    model = fit_ar(x, 3, 150)
    k, i = 5, 120
    window = list(x[i - k + 1 - 3:i - k + 1])
    for _ in range(k):
        window.append(float(np.dot(model.weights, window[-3:]) + model.bias))
    assert abs(predict_k_step(model, x, k)[i] - window[-1]) < 1e-12
    assert np.isnan(predict_k_step(model, x, k)[3 + k - 2])
    assert np.isfinite(predict_k_step(model, x, k)[3 + k - 1])


def test_error_grows_with_horizon():
    x = make_series(1000, 0.2, 0)
    model = fit_ar(x, 4, 600)
    curve = mse_by_horizon(model, x, 64, start=600)
    assert curve.shape == (64,)
    assert curve[63] > 3 * curve[0]
    train, test = one_step_mse(model, x, 600)
    assert 0.02 < train < 0.08 and 0.02 < test < 0.08


@pytest.mark.parametrize("call, message", [
    (lambda: fit_ar(make_series(100), 60, 50), "tau"),
    (lambda: fit_ar(make_series(100), 0, 50), "tau"),
    (lambda: fit_ar(np.array([1.0, np.nan, 2.0] * 10), 2, 20), "NaN"),
    (lambda: predict_k_step(fit_ar(make_series(100), 4, 50), make_series(100), 0), "k"),
    (lambda: make_series(5), "T"),
    (lambda: make_series(100, -1), "noise"),
    (lambda: make_series(100, float("nan")), "noise"),
    (lambda: fit_ar(make_series(100), "4", 50), "whole number"),
    (lambda: mse_by_horizon(fit_ar(make_series(100), 4, 50), make_series(100), 200), "No target"),
])
def test_invalid_arguments_raise_clear_value_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@settings(max_examples=60, deadline=None)
@given(T=st.integers(-5, 3000), noise=st.one_of(st.floats(-1, 3), st.just(float('nan'))), seed=st.integers(0, 50),
       tau=st.integers(-2, 80), n_train=st.integers(-5, 3000), k=st.integers(-2, 80))
def test_any_controls_give_finite_output_or_value_error(T, noise, seed, tau, n_train, k):
    try:
        x = make_series(T, noise, seed)
        model = fit_ar(x, tau, n_train)
        pred = predict_k_step(model, x, k)
        curve = mse_by_horizon(model, x, k, start=min(n_train, len(x) - 1))
    except ValueError as exc:
        assert str(exc)
        return
    assert np.all(np.isfinite(pred[tau + k - 1:])) and np.all(np.isfinite(curve))
    assert np.all(np.isfinite(model.weights)) and isinstance(model, ARModel)


def test_mse_by_horizon_matches_explicit_k_step_forecasts():
    x = make_series(500, 0.25, 7)
    model = fit_ar(x, 6, 300)
    curve = mse_by_horizon(model, x, 20, start=300)
    first = max(300, 6 + 20 - 1)
    for k in (1, 2, 7, 20):
        pred = predict_k_step(model, x, k)
        assert abs(curve[k - 1] - np.mean((pred[first:] - x[first:]) ** 2)) < 1e-12
