"""Autoregressive forecasting of a noisy sine (D2L, section "Working with Sequences").

x_t = sin(0.01 t) + eps_t for t = 1..T. An AR(tau) model with a bias predicts x_t from the tau
previous values; it is fitted by linear least squares in closed form. Feeding the model its own
predictions gives k-step-ahead forecasts, whose error grows with k.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.i18n import _

from core.checks import check_finite_array, check_int, check_real

MAX_T = 100_000


@dataclass(frozen=True)
class ARModel:
    """x_hat_t = weights . (x_{t-tau}, ..., x_{t-1}) + bias (weights[0] multiplies the oldest value)."""

    weights: np.ndarray
    bias: float

    @property
    def tau(self) -> int:
        return int(self.weights.shape[0])


def make_series(T: int = 1000, noise: float = 0.2, seed: int = 0) -> np.ndarray:
    """The series x_t = sin(0.01 t) + N(0, noise^2), t = 1..T, as a float64 array of length T."""
    T = check_int("T", T, 10, MAX_T)
    noise = check_real("noise", noise, 0.0, 10.0)
    seed = check_int("seed", seed, 0, 2**32 - 1)
    t = np.arange(1, T + 1, dtype=np.float64)
    rng = np.random.default_rng(seed)
    return np.sin(0.01 * t) + noise * rng.standard_normal(T)


def noise_power(x: np.ndarray, start: int, stop: int) -> float:
    """Mean square of the noise in x[start:stop] of a make_series series (x minus the sine it was made from):
    the smallest one-step MSE any model could expect there."""
    x = check_finite_array("x", x, ndim=1)
    start = check_int("start", start, 0, len(x) - 1)
    stop = check_int("stop", stop, start + 1, len(x))
    t = np.arange(start + 1, stop + 1, dtype=np.float64)
    return float(np.mean((x[start:stop] - np.sin(0.01 * t)) ** 2))


def lag_matrix(x: np.ndarray, tau: int) -> tuple[np.ndarray, np.ndarray]:
    """Features (rows x[i-tau:i]) and labels x[i] for every i = tau..len(x)-1."""
    x = check_finite_array("x", x, ndim=1)
    tau = check_int("tau", tau, 1, max(1, len(x) - 1))
    n = len(x) - tau
    features = np.lib.stride_tricks.sliding_window_view(x, tau)[:n]
    return np.ascontiguousarray(features), x[tau:].copy()


def fit_ar(x: np.ndarray, tau: int = 4, n_train: int = 600) -> ARModel:
    """Least-squares AR(tau) with bias on the windows whose label lies in x[:n_train]."""
    x = check_finite_array("x", x, ndim=1)
    n_train = check_int("n_train", n_train, 2, len(x), what=_("the series length"))
    tau = check_int("tau", tau, 1, 10_000)
    if tau >= n_train:
        raise ValueError(_("tau ({tau}) must be smaller than n_train ({n_train}): each training example needs tau "
                           "earlier values inside the training range.").format(tau=tau, n_train=n_train))
    n_windows = n_train - tau
    if n_windows < tau + 1:
        raise ValueError(_("Only {windows} training windows for {unknowns} unknowns (tau weights and a bias): make "
                           "n_train at least {least} or tau smaller.").format(windows=n_windows, unknowns=tau + 1,
                                                                              least=2 * tau + 1))
    features, labels = lag_matrix(x[:n_train], tau)
    design = np.hstack([features, np.ones((n_windows, 1))])
    solution = np.linalg.lstsq(design, labels, rcond=None)[0]
    return ARModel(weights=solution[:-1].copy(), bias=float(solution[-1]))


def predict_k_step(model: ARModel, x: np.ndarray, k: int) -> np.ndarray:
    """k-step-ahead forecasts: entry i predicts x[i] from x[:i-k+1] only, feeding back k-1 predictions.

    Entries with i < tau + k - 1 have no forecast and are NaN. k = 1 gives one-step predictions.
    """
    x = check_finite_array("x", x, ndim=1)
    tau = model.tau
    k = check_int("k", k, 1, 10_000)
    if len(x) < tau + k:
        raise ValueError(_("The series has {points} points; a {k}-step forecast with tau = {tau} needs at least "
                           "{least}.").format(points=len(x), k=k, tau=tau, least=tau + k))
    buf = _fed_back(model, x, k, len(x) - tau - k + 1)
    out = np.full(len(x), np.nan)
    out[tau + k - 1:] = buf[:, -1]
    return out


def _fed_back(model: ARModel, x: np.ndarray, steps: int, rows: int) -> np.ndarray:
    """Row j: the window x[j:j+tau], then `steps` forecasts, each fed the ones before it: column tau + s is the
    (s + 1)-step forecast of x[j + tau + s]."""
    tau = model.tau
    buf = np.empty((rows, tau + steps))
    buf[:, :tau] = np.lib.stride_tricks.sliding_window_view(x, tau)[:rows]
    for s in range(steps):
        buf[:, tau + s] = buf[:, s:s + tau] @ model.weights + model.bias
    return buf


def mse_by_horizon(model: ARModel, x: np.ndarray, max_k: int = 64, start: int = 0) -> np.ndarray:
    """Mean squared error of the k-step forecasts for k = 1..max_k (entry k-1).

    Every horizon is scored on the same targets x[i], i >= max(start, tau + max_k - 1), so the
    curve compares like with like.
    """
    x = check_finite_array("x", x, ndim=1)
    max_k = check_int("max_k", max_k, 1, 10_000)
    start = check_int("start", start, 0, len(x) - 1)
    first = max(start, model.tau + max_k - 1)
    if first >= len(x):
        raise ValueError(_("No target left to score: with tau = {tau} and max_k = {max_k} the first forecastable "
                           "point is {first}, past the series end ({points}).").format(
                               tau=model.tau, max_k=max_k, first=model.tau + max_k - 1, points=len(x)))
    # One pass of max_k feedback steps from every start window gives every horizon at once.
    tau = model.tau
    buf = _fed_back(model, x, max_k, len(x) - tau)
    targets = x[first:]
    out = np.empty(max_k)
    for s in range(max_k):
        rows = np.arange(first, len(x)) - tau - s
        out[s] = float(np.mean((buf[rows, tau + s] - targets) ** 2))
    return out


def forecast_from_end(model: ARModel, x: np.ndarray, n_train: int) -> np.ndarray:
    """Forecasts of x[n_train:] that use nothing past the training range: each new value is predicted from
    the last tau values, which after the first tau steps are all the model's own predictions. Entries before
    n_train are NaN. With nothing new coming in, the forecast settles to where the fitted map stops moving."""
    x = check_finite_array("x", x, ndim=1)
    n_train = check_int("n_train", n_train, model.tau, len(x), what=_("the series length"))
    buf = np.concatenate([x[n_train - model.tau: n_train], np.empty(len(x) - n_train)])
    for i in range(model.tau, len(buf)):
        buf[i] = buf[i - model.tau: i] @ model.weights + model.bias
    out = np.full(len(x), np.nan)
    out[n_train:] = buf[model.tau:]
    return out


def one_step_mse(model: ARModel, x: np.ndarray, n_train: int) -> tuple[float, float]:
    """One-step MSE on the training range (labels < n_train) and on the test range (labels >= n_train)."""
    x = check_finite_array("x", x, ndim=1)
    n_train = check_int("n_train", n_train, model.tau + 1, len(x), what=_("the series length"))
    pred = predict_k_step(model, x, 1)
    err = (pred - x) ** 2
    train = float(np.mean(err[model.tau:n_train]))
    test = float(np.mean(err[n_train:])) if n_train < len(x) else math.nan
    return train, test


def mse_from(forecasts: np.ndarray, x: np.ndarray, start: int) -> float:
    """MSE of the forecasts of the points x[i], i >= start, that have one (NaN when none has)."""
    errors = (forecasts - x)[start:]
    errors = errors[np.isfinite(errors)]
    return float(np.mean(errors ** 2)) if errors.size else math.nan


BOOK_HORIZONS = (1, 4, 16, 64)   # the k-step forecasts the book plots


@dataclass
class Analysis:
    """Everything the Forecasting lab shows for one setting of its controls."""

    model: ARModel
    train_mse: float               # one step, training range
    test_mse: float                # one step, test range
    k_mse: float                   # k steps, test range
    horizon: np.ndarray | None     # test MSE for k = 1..max_k (None when the test range is too short)
    test_variance: float           # the MSE of guessing the test range's mean
    forecasts: dict                # k -> k-step forecasts over the whole series, for the book's k and the chosen one
    from_end: np.ndarray           # forecasts of the test range from the training range alone (forecast_from_end)

    @property
    def k_ratio(self) -> float:
        """How many times the k-step test error is the one-step test error (NaN when that is 0)."""
        return self.k_mse / self.test_mse if self.test_mse > 0 else math.nan

    @property
    def settles_at(self) -> float:
        """Where the forecast from the end of the training range ends (its last value)."""
        return float(self.from_end[-1])

    @property
    def fixed_point(self) -> float:
        """Where a forecast fed its own guesses comes to rest, if it does: the x with x = (sum of weights) x + bias,
        so bias / (1 - sum of weights). NaN when the weights sum to 1 (no such point)."""
        total = float(np.sum(self.model.weights))
        return self.model.bias / (1.0 - total) if not math.isclose(total, 1.0, abs_tol=1e-12) else math.nan

    @property
    def still_moving(self) -> float:
        """How far the forecast from the end still moves over its last 50 steps (max - min): 0 once at rest."""
        tail = self.from_end[np.isfinite(self.from_end)][-50:]
        return float(tail.max() - tail.min()) if tail.size else math.nan


def analyse(x: np.ndarray, tau: int, n_train: int, k: int, max_k: int = 64) -> Analysis:
    """Fit AR(tau) on x[:n_train], score it one and k steps ahead on the rest, and the MSE for every horizon."""
    model = fit_ar(x, tau, n_train)
    train_mse, test_mse = one_step_mse(model, x, n_train)
    longest = min(max_k, len(x) - n_train - tau)
    horizon = mse_by_horizon(model, x, longest, start=n_train) if longest >= 1 else None
    ks = [kk for kk in sorted(set(BOOK_HORIZONS) | {k}) if kk <= len(x) - tau]
    forecasts = {kk: predict_k_step(model, x, kk) for kk in ks}
    k_forecast = forecasts[k] if k in forecasts else predict_k_step(model, x, k)  # the latter explains the error
    return Analysis(model, train_mse, test_mse, mse_from(k_forecast, x, n_train), horizon,
                    float(np.var(x[n_train:])), forecasts, forecast_from_end(model, x, n_train))
