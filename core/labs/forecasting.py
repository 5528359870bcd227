"""Lab 1, Forecasting: an AR(τ) model on a noisy sine, one-step against k-step forecasts.

The whole lab in one place (see core.labs): settings, computation, metrics, figures, readings and texts. The
chapter's Act 1 shows the same figures and readings at its own τ."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from core.claims import Claim
from core.i18n import N_, _, listing, sentences
from core.figures import Chart, Metric, hline, log_ticks, number_ticks, style, x_band
from core.sequences import forecast, readings as fr
from core.settings import setting

KEY = "forecasting"
TITLE = N_("Forecasting")   # the menu shows it translated (core.i18n)
ICON = ":material/show_chart:"
BLURB = N_("Fit an autoregressive model to a noisy sine and see why k-step forecasts fall apart.")
SECTION = "9.1 Working with Sequences"


@dataclass(frozen=True)
class Settings:
    T: int = setting(1000, N_("Series length T"), lo=100, hi=5000, step=50)
    n_train: int = setting(600, N_("Training points n_train"),
                           N_("The model is fitted on the first n_train points only."), lo=50, hi=4999, step=10)
    tau: int = setting(4, N_("Window τ (tau)"), N_("How many past values the model looks at."), lo=1, hi=64)
    k: int = setting(16, N_("Horizon k"), N_("Steps ahead: the model feeds its own guesses back k-1 times."),
                     lo=1, hi=64)
    sigma: float = setting(0.2, N_("Noise σ (sigma)"), lo=0.0, hi=1.0, step=0.01)
    seed: int = setting(0, N_("Seed"), lo=0, hi=10_000, widget="input")


@dataclass(frozen=True)
class Result:
    settings: Settings
    x: np.ndarray               # the series
    analysis: forecast.Analysis
    train_noise: float          # the noise's mean square over the training windows' targets
    test_noise: float           # and over the test range


def compute(s: Settings) -> Result:
    x = forecast.make_series(s.T, s.sigma, s.seed)
    a = forecast.analyse(x, s.tau, s.n_train, s.k)
    return Result(s, x, a, forecast.noise_power(x, s.tau, s.n_train), forecast.noise_power(x, s.n_train, len(x)))


def metrics(r: Result) -> list[Metric]:
    a, k = r.analysis, r.settings.k
    ratio = fr.k_vs_one(a, k).numbers["ratio"]
    times = _("{ratio:.1f}× one-step").format(ratio=ratio) if math.isfinite(ratio) and k > 1 else ""
    return [Metric(_("One-step MSE, training range"), f"{a.train_mse:.4f}"),
            Metric(_("One-step MSE, test range"), f"{a.test_mse:.4f}"),
            Metric(_("{k}-step MSE, test range").format(k=k), f"{a.k_mse:.4f}", delta=times, delta_color="inverse")]


def forecasts_figure(s: Settings, x: np.ndarray, a: forecast.Analysis, every_horizon: bool = False) -> go.Figure:
    """The data with the k-step forecasts (the chosen k and 1 shown, the book's others in the legend; all of them
    with every_horizon)."""
    t = np.arange(1, len(x) + 1)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=t, y=x, name=_("data"), line=dict(color="#9aa5b1", width=1)))
    for kk, pred in a.forecasts.items():
        fig.add_trace(go.Scatter(x=t, y=pred, name=_("{k}-step").format(k=kk),
                                 line=dict(width=2.5 if kk == s.k else 1.5),
                                 visible=True if every_horizon or kk in (1, s.k) else "legendonly"))
    fig.add_trace(go.Scatter(x=t, y=a.from_end, name=_("from the end of training (own guesses only)"),
                             line=dict(width=2.5, dash="dash", color="#222222")))
    x_band(fig, 1, s.n_train, _("training range"))
    style(fig, _("Data and forecasts"), _("time t"), "x", height=420, legend_below=True)
    fig.update_layout(legend_title_text=_("click to show or hide:"))   # the book's k = 4, 16, 64
    return fig


def horizon_figure(s: Settings, a: forecast.Analysis) -> go.Figure:
    """Test MSE against the horizon k, with the chosen k marked and a constant guess for scale."""
    fig = go.Figure(go.Scatter(x=np.arange(1, len(a.horizon) + 1), y=a.horizon, mode="lines+markers",
                               name=_("test MSE"), marker=dict(size=4)))
    if s.k <= len(a.horizon):
        fig.add_trace(go.Scatter(x=[s.k], y=[a.horizon[s.k - 1]], mode="markers", name=f"k = {s.k}",
                                 marker=dict(size=12, color="#e45756")))
    log_y = float(np.max(a.horizon)) >= fr.EXACT   # all zero to rounding (no noise): a plain axis at 0
    hline(fig, a.test_variance, _("variance of the test data (a constant guess)"), log_y=log_y)
    fig = style(fig, _("Test MSE against the horizon k"), "k", "MSE", log_y=log_y)
    if log_y:   # ticks up to the constant guess's line too (at τ = 64 they crowded below 0.064, none near 0.257)
        lo, hi = float(np.min(a.horizon[a.horizon > 0])), max(float(np.max(a.horizon)), a.test_variance)
        number_ticks(fig, "y", log_ticks(lo, hi))
    return fig


def forecasts_summary(r: Result) -> str:
    """The forecasts figure in one line of numbers (under the figure, and for screen readers)."""
    s, a = r.settings, r.analysis
    ratio = fr.k_vs_one(a, s.k).numbers["ratio"]
    if math.isfinite(ratio) and s.k > 1:
        text = _("With a window of τ = {tau}, the one-step test error is {one:.3f} and the {k}-step error {k_mse:.3f}, "
                 "{ratio:.1f} times as large.")
    else:
        text = _("With a window of τ = {tau}, the one-step test error is {one:.3f} and the {k}-step error {k_mse:.3f}.")
    return sentences(text.format(tau=s.tau, one=a.test_mse, k=s.k, k_mse=a.k_mse, ratio=ratio),
                     fr.rest(a, s.n_train, s.T))


def horizon_summary(a: forecast.Analysis) -> str:
    at = {k: a.horizon[k - 1] for k in (1, 16) if k <= len(a.horizon)}
    parts = listing(_("{err:.3f} at k = {k}").format(err=v, k=k) for k, v in at.items())
    return _("Test error against the horizon k: {parts} and {last:.3f} at k = {k}; guessing a constant scores "
             "{constant:.3f}.").format(parts=parts, last=a.horizon[-1], k=len(a.horizon), constant=a.test_variance)


def charts(r: Result) -> list[Chart]:
    s, a = r.settings, r.analysis
    out = [Chart("forecasts", forecasts_figure(s, r.x, a), forecasts_summary(r))]
    if a.horizon is not None:
        out.append(Chart("horizon", horizon_figure(s, a), horizon_summary(a)))
    return out


def train_test(r: Result) -> tuple[str, Claim]:
    """The heading and the claim on the test error against the training error."""
    return fr.train_test(r.analysis, r.train_noise, r.test_noise)


def readings(r: Result) -> list[Claim]:
    """Every sentence of the lab (and of Act 1) that states a number, a trend or a regime."""
    s, a = r.settings, r.analysis
    claims = [fr.one_step(a, s.sigma), fr.k_vs_one(a, s.k), fr.horizon_trend(a), fr.far_horizon(a),
              fr.rest(a, s.n_train, s.T), train_test(r)[1]]
    return [c for c in claims if c is not None]


def notes(r: Result) -> str:
    """'Reading it': what the figures show, in claims built from their numbers, then the training-test gap."""
    s, a = r.settings, r.analysis
    trend = fr.horizon_trend(a)
    heading, gap = train_test(r)
    said = [fr.one_step(a, s.sigma), fr.k_vs_one(a, s.k), trend, _("The dashed black curve goes furthest."),
            fr.rest(a, s.n_train, len(r.x))]
    return _("**Reading it.** {said}\n\n**{heading}.** {gap}").format(
        said=sentences(*said), heading=heading, gap=gap)


def weights(r: Result) -> dict:
    """The fitted bias and weights, named by the value each multiplies."""
    a, tau = r.analysis, r.settings.tau
    return {_("bias"): round(a.model.bias, 6),
            **{f"w{i + 1} (x[t-{tau - i}])": round(float(w), 6) for i, w in enumerate(a.model.weights)}}


def numbers(r: Result) -> dict:
    a = r.analysis
    return dict(train_mse=a.train_mse, test_mse=a.test_mse, k_mse=a.k_mse)


INTRO = N_("A sequence model guesses the next value from the values before it. Here the data is a sine wave buried in "
         "noise, and the model is the simplest one there is: a weighted sum of the last $\\tau$ values plus a bias, "
         "fitted in one shot by least squares.")
FORMULA = (r"\begin{gathered}x_t = \sin(0.01\,t) + \epsilon_t,\quad \epsilon_t\sim\mathcal N(0,\sigma^2) \\"
           r"\hat x_t = w_1 x_{t-\tau} + \dots + w_\tau x_{t-1} + b\end{gathered}")
NOTATION = ""
SOURCE = (forecast.make_series, forecast.fit_ar, forecast.predict_k_step, forecast.mse_by_horizon)
