"""Lab 1, Forecasting: an AR(tau) model on a noisy sine, one-step vs k-step forecasts."""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.sequences import forecast, readings
from core.labs import Forecasting as Settings, controls_of
from ui import exercises, url_state
from ui.common import cite, header, show_source
from ui.lab import lab_fragment
from ui.plots import frozen, hline, log_ticks, number_ticks, show, style, x_band


CONTROLS = controls_of("forecasting")   # declared in core.labs


def controls() -> Settings:
    T = url_state.draw(CONTROLS["T"])
    return Settings(T=T, n_train=url_state.draw(CONTROLS["n_train"], hi=T - 1),
                    **{name: url_state.draw(CONTROLS[name]) for name in ("tau", "k", "sigma", "seed")})


@st.cache_data(show_spinner=False, max_entries=64)
def series(T: int, sigma: float, seed: int) -> np.ndarray:
    return forecast.make_series(T, sigma, seed)


def forecasts_figure(s: Settings, x: np.ndarray, a: forecast.Analysis, every_horizon: bool = False) -> go.Figure:
    """The data with the k-step forecasts (the chosen k and 1 shown, the book's others in the legend; all of them
    with every_horizon)."""
    t = np.arange(1, len(x) + 1)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=t, y=x, name="data", line=dict(color="#9aa5b1", width=1)))
    for kk, pred in a.forecasts.items():
        fig.add_trace(go.Scatter(x=t, y=pred, name=f"{kk}-step", line=dict(width=2.5 if kk == s.k else 1.5),
                                 visible=True if every_horizon or kk in (1, s.k) else "legendonly"))
    fig.add_trace(go.Scatter(x=t, y=a.from_end, name="from the end of training (own guesses only)",
                             line=dict(width=2.5, dash="dash", color="#222222")))
    x_band(fig, 1, s.n_train, "training range")
    style(fig, "Data and forecasts", "time t", "x", height=420, legend_below=True)
    fig.update_layout(legend_title_text="click to show or hide:")   # the book's k = 4, 16, 64
    return fig


def horizon_figure(s: Settings, a: forecast.Analysis) -> go.Figure:
    """Test MSE against the horizon k, with the chosen k marked and a constant guess for scale."""
    fig = go.Figure(go.Scatter(x=np.arange(1, len(a.horizon) + 1), y=a.horizon, mode="lines+markers",
                               name="test MSE", marker=dict(size=4)))
    if s.k <= len(a.horizon):
        fig.add_trace(go.Scatter(x=[s.k], y=[a.horizon[s.k - 1]], mode="markers", name=f"k = {s.k}",
                                 marker=dict(size=12, color="#e45756")))
    log_y = float(np.max(a.horizon)) >= readings.EXACT   # all zero to rounding (no noise): a plain axis at 0
    hline(fig, a.test_variance, "variance of the test data (a constant guess)", log_y=log_y)
    fig = style(fig, "Test MSE against the horizon k", "k", "MSE", log_y=log_y)
    if log_y:   # ticks up to the constant guess's line too (at τ = 64 they crowded below 0.064, none near 0.257)
        lo, hi = float(np.min(a.horizon[a.horizon > 0])), max(float(np.max(a.horizon)), a.test_variance)
        number_ticks(fig, "y", log_ticks(lo, hi))
    return fig


@st.cache_resource(show_spinner=False, max_entries=32)
def computed(s: Settings) -> tuple:
    """The series, its analysis and both figures for these settings, built once for every learner who sets them:
    a class told "now set tau to 8" asks for the same ones at the same instant, and the first learner's run
    builds them while the others wait for it. Shared, so nothing changes them after."""
    x = series(s.T, s.sigma, s.seed)
    a = forecast.analyse(x, s.tau, s.n_train, s.k)
    return x, a, frozen(forecasts_figure(s, x, a)), frozen(horizon_figure(s, a)) if a.horizon is not None else None


def metrics(s: Settings, a: forecast.Analysis) -> None:
    m1, m2, m3 = st.columns(3)
    m1.metric("One-step MSE, training range", f"{a.train_mse:.4f}")
    m2.metric("One-step MSE, test range", f"{a.test_mse:.4f}")
    ratio = readings.k_vs_one(a, s.k).numbers["ratio"]
    m3.metric(f"{s.k}-step MSE, test range", f"{a.k_mse:.4f}", delta_color="inverse",
              delta=f"{ratio:.1f}× one-step" if math.isfinite(ratio) and s.k > 1 else None)


def reading(s: Settings, x: np.ndarray, a: forecast.Analysis) -> str:
    """What the figures show, in claims built from their numbers (core.sequences.readings)."""
    train_noise, test_noise = forecast.noise_power(x, s.tau, s.n_train), forecast.noise_power(x, s.n_train, len(x))
    trend = readings.horizon_trend(a)
    heading, gap = readings.train_test(a, train_noise, test_noise)
    return (f"**Reading it.** {readings.one_step(a, s.sigma)} {readings.k_vs_one(a, s.k)} "
            f"{trend.text + ' ' if trend else ''}The dashed black curve goes furthest. "
            f"{readings.rest(a, s.n_train, len(x))}\n\n**{heading}.** {gap}")


def horizon_summary(a: forecast.Analysis) -> str:
    at = {k: a.horizon[k - 1] for k in (1, 16) if k <= len(a.horizon)}
    parts = ", ".join(f"{v:.3f} at k = {k}" for k, v in at.items())
    return (f"Test error against the horizon k: {parts} and {a.horizon[-1]:.3f} at k = {len(a.horizon)}; "
            f"guessing a constant scores {a.test_variance:.3f}.")


def summary(s: Settings, a: forecast.Analysis) -> str:
    """The figures in one line of numbers (under the figure, and for screen readers)."""
    ratio = readings.k_vs_one(a, s.k).numbers["ratio"]
    times = f", {ratio:.1f} times as large" if math.isfinite(ratio) and s.k > 1 else ""
    return (f"With a window of τ = {s.tau}, the one-step test error is {a.test_mse:.3f} and the {s.k}-step error "
            f"{a.k_mse:.3f}{times}. {readings.rest(a, s.n_train, s.T)}")


def view(s: Settings) -> None:
    """Everything the controls move: the metrics, both figures, the reading and the fitted weights."""
    exercises.hold_figures("forecasting")
    x, a, forecasts, horizon = computed(s)
    metrics(s, a)
    show(forecasts, summary(s, a), "forecasts")
    if horizon is not None:
        show(horizon, horizon_summary(a), "horizon")
    st.markdown(reading(s, x, a))
    with st.expander("Fitted weights"):
        st.write({"bias": round(a.model.bias, 6),
                  **{f"w{i + 1} (x[t-{s.tau - i}])": round(float(w), 6) for i, w in enumerate(a.model.weights)}})


def main() -> None:
    url_state.page("forecasting")
    header("forecasting")
    st.markdown(
        "A sequence model guesses the next value from the values before it. Here the data is a sine wave "
        "buried in noise, and the model is the simplest one there is: a weighted sum of the last "
        r"$\tau$ values plus a bias, fitted in one shot by least squares.")
    st.latex(r"\begin{gathered}x_t = \sin(0.01\,t) + \epsilon_t,\quad \epsilon_t\sim\mathcal N(0,\sigma^2) \\"
             r"\hat x_t = w_1 x_{t-\tau} + \dots + w_\tau x_{t-1} + b\end{gathered}")
    cite("9.1 Working with Sequences")
    exercises.assignment("forecasting")
    lab_fragment("forecasting", controls, view)
    show_source(forecast.make_series, forecast.fit_ar, forecast.predict_k_step, forecast.mse_by_horizon)
    exercises.section("forecasting")


if __name__ == "__main__":
    main()
