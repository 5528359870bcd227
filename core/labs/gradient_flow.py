"""Lab 5, Gradient flow: the backpropagated gradient vanishes or explodes with the spectral radius of W_hh.

The whole lab in one place: its settings, the computation from settings to a result, its metrics, figures and
readings (claims built from the numbers they state), the book section it follows and the code it shows. Its page
(pages/gradient_flow.py) draws these, and its notebook (python -m core notebook gradient_flow) runs them."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import plotly.graph_objects as go

from core.i18n import N_, _, sentences
from core.claims import Claim
from core.figures import Chart, Metric, style
from core.nn import gradflow, gradflow_readings as gr
from core.settings import setting

KEY = "gradient_flow"
TITLE = N_("Gradient flow")   # the menu shows it translated (core.i18n)
ICON = ":material/waves:"
BLURB = N_("Turn the spectral radius of W_hh and watch the backpropagated gradient vanish or explode.")
SECTION = "9.7 Backpropagation Through Time"
SCALES = (0.25, 0.35, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0, 1.05, 1.1, 1.2, 1.3, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0)


@dataclass(frozen=True)
class Settings:
    scale: float = setting(1.0, N_("Weight scale (× W_hh)"), N_("Multiplies the random matrix; ρ scales with it."),
                           widget="select_slider", choices=SCALES)
    n: int = setting(32, N_("Hidden size n"), lo=2, hi=256)
    T: int = setting(24, N_("Steps back T"), lo=1, hi=200)
    kind: Literal[gradflow.KINDS] = setting("gaussian", N_("Matrix kind"), widget="radio",
                                            words={"gaussian": N_("gaussian"), "orthogonal": N_("orthogonal")})
    use_tanh: bool = setting(True, N_("Through tanh"), N_("Off: the purely linear recurrence."), url="tanh")
    input_scale: float = setting(1.0, N_("Input scale"), N_("Larger inputs push tanh into saturation."), lo=0.0,
                                 hi=5.0, step=0.1, url="input")
    theta: float = setting(1.0, N_("Clipping threshold θ"), lo=0.1, hi=10.0, step=0.1)
    seed: int = setting(0, N_("Seed"), lo=0, hi=10_000, widget="input")


@dataclass(frozen=True)
class Result:
    settings: Settings
    analysis: gradflow.Analysis
    saturation_rates: dict      # (weight scale, input scale) -> rate per step through tanh, this matrix's n, T, seed


def compute(s: Settings) -> Result:
    """The analysis at these settings, and the four rates 'What to try' quotes, for this page's own matrix (its n,
    kind and seed) over its T steps."""
    a = gradflow.analyse(s.n, s.scale, s.T, s.kind, s.input_scale, s.seed, s.use_tanh, s.theta)
    return Result(s, a, gr.saturation_rates(s.n, s.T, s.kind, s.seed))


def metrics(r: Result) -> list[Metric]:
    a = r.analysis
    return [Metric(_("Spectral radius ρ"), f"{a.rho:.3f}"),
            Metric(_("|g| after {T} steps").format(T=r.settings.T), f"{float(a.shown[-1]):.2e}"),
            Metric(_("Growth per step"), f"{a.growth:.3f}", _("(|g_T| / |g_0|)^(1/T), to compare with ρ")),
            Metric(_("Regime"), gr.regime_word(a.regime))]


def norms_figure(a: gradflow.Analysis) -> go.Figure:
    """Gradient norm against steps back: linear, through tanh, and the ρᵏ guide."""
    k = np.arange(len(a.linear))
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=k, y=a.linear, name=_("linear: (W_hhᵀ)ᵏ g"), mode="lines+markers",
                             marker=dict(size=4)))
    if a.tanh is not None:
        fig.add_trace(go.Scatter(x=k, y=a.tanh, name=_("through tanh"), mode="lines+markers", marker=dict(size=4)))
    fig.add_trace(go.Scatter(x=k, y=a.guide, name=_("slope of ρ per step"), line=dict(dash="dash", color="gray")))
    return style(fig, _("Gradient norm against steps back"), _("steps back k"), _("gradient norm"), height=380,
                 log_y=True)


def eigenvalues_figure(a: gradflow.Analysis) -> go.Figure:
    """The eigenvalues of W_hh in the complex plane, with the unit circle."""
    t = np.linspace(0, 2 * np.pi, 200)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=np.cos(t), y=np.sin(t), name=_("unit circle"), line=dict(color="gray", dash="dot")))
    fig.add_trace(go.Scatter(x=a.eigenvalues.real, y=a.eigenvalues.imag, mode="markers", name=_("eigenvalues"),
                             marker=dict(size=6, color="#e45756")))
    lim = max(1.2, a.rho * 1.1)
    style(fig, _("Eigenvalues of W_hh"), None, None, height=380)
    fig.update_layout(xaxis=dict(range=[-lim, lim], title=_("real")), showlegend=False,
                      yaxis=dict(range=[-lim, lim], title=_("imaginary"), scaleanchor="x"))
    return fig


def clipping_figure(a: gradflow.Analysis, theta: float) -> go.Figure:
    """Every step's gradient norm before and after clipping the whole gradient (one factor for all steps),
    beside capping each step on its own, which clipping does not do."""
    k = np.arange(len(a.shown))
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=k, y=a.shown, name=_("unclipped")))
    fig.add_trace(go.Scatter(x=k, y=a.clipped, name=_("clipped at θ = {theta:g} (× {factor:.3g})").format(
        theta=theta, factor=a.clip_factor)))
    fig.add_trace(go.Scatter(x=k, y=np.minimum(a.shown, theta), name=_("capping each step (not what clipping does)"),
                             line=dict(dash="dot", color="gray")))
    return style(fig, _("Clipping: one factor for every step"), _("steps back k"), _("gradient norm"), height=380,
                 log_y=True, legend_below=True)


def norms_summary(r: Result) -> str:
    a = r.analysis
    at = dict(linear=a.linear[-1], T=r.settings.T, tanh=a.tanh[-1] if a.tanh is not None else 0.0, growth=a.growth,
              rho=a.rho)
    return (_("Gradient norm against steps back: the linear gradient norm goes from 1 to {linear:.3g} over {T} steps, "
              "{growth:.3g} per step on the shown curve (ρ = {rho:.3g}).") if a.tanh is None else
            _("Gradient norm against steps back: the linear gradient norm goes from 1 to {linear:.3g} over {T} steps; "
              "through tanh from 1 to {tanh:.3g}, {growth:.3g} per step on the shown curve (ρ = {rho:.3g}).")
            ).format(**at)


def charts(r: Result) -> list[Chart]:
    """The lab's three figures with their summaries: norms, eigenvalues, clipping."""
    a, theta = r.analysis, r.settings.theta
    return [Chart("norms", norms_figure(a), norms_summary(r)),
            Chart("eigenvalues", eigenvalues_figure(a), gr.outside(a).text),
            Chart("clipping", clipping_figure(a, theta), sentences(gr.clip_action(a, theta), gr.clip_share(a)))]


def regime(r: Result) -> Claim:
    return gr.regime(r.analysis)


def regime_word(r: Result) -> str:
    """The regime's name as the page says it (the word the regime sentence colours)."""
    return gr.regime_word(r.analysis.regime)


def damping(r: Result) -> Claim | None:
    return gr.damping(r.analysis)


def saturation(r: Result) -> Claim:
    s = r.settings
    return gr.saturation(r.saturation_rates, _("this page's {kind} matrix (n = {n}, seed {seed}) over its {T} "
                                                "steps").format(kind=_(s.kind), n=s.n, seed=s.seed, T=s.T))


def readings(r: Result) -> list[Claim]:
    """Every sentence of the lab that states a number, a trend or a regime, in the page's order (None left out)."""
    a, theta = r.analysis, r.settings.theta
    claims = [regime(r), damping(r), gr.outside(a), gr.clip_action(a, theta), gr.clip_share(a),
              saturation(r)]
    return [c for c in claims if c is not None]


def numbers(r: Result) -> dict:
    """What the notebook prints for the tests to compare with the page's."""
    a = r.analysis
    return dict(rho=a.rho, growth=a.growth, regime=a.regime, clip_factor=a.clip_factor)


INTRO = N_(
    "Training an RNN sends the error signal backwards through every time step. Each step back multiplies it by the "
    "same recurrent matrix (and, with tanh, by the slope of the activation), so after k steps it behaves like a k-th "
    "power. Powers of numbers below one shrink to nothing; above one they blow up. The largest |eigenvalue| of "
    "W_hh, its **spectral radius ρ**, decides which.")
FORMULA = (r"\begin{gathered}\frac{\partial h_T}{\partial h_{T-k}} = \prod_{t=T-k+1}^{T} "
           r"\operatorname{diag}(1-h_t^2)\,W_{hh} \\ \|g_{T-k}\| \propto \rho^k \text{ for large } k"
           r"\ \text{(linear case)}\end{gathered}")
NOTATION = N_("Notation: this page writes states as columns, hₜ = tanh(W_hh hₜ₋₁ + xₜ). The book and the RNN cell lab "
            "write them as rows, Hₜ = φ(Xₜ W_xh + Hₜ₋₁ W_hh + b_h), where the same matrix appears transposed; the "
            "norms and eigenvalue sizes are the same either way.")
NOTES = N_("""
**What to try.** Slide the scale: around ρ ≈ 1 the linear curve is flat; below, it falls off a cliff; above,
it shoots up. Switch to an orthogonal matrix: every eigenvalue sits on the unit circle, and at weight scale 1
the linear norm stays exactly 1 (an orthogonal matrix keeps lengths); at scale s it is exactly sᵏ. {saturation}

**The dashed line** has the slope of ρ per step and passes through the last point of the linear curve: once
the largest eigenvalues dominate, the linear norm changes by about ρ per step, but it need not start at 1.

**Truncation.** Backpropagating through all T steps (*full*) is exact but costly and unstable when ρ > 1.
*Regular truncation* stops after a fixed window (what RNN Lab's training does between windows), trading
long-range signal for stability. *Randomized truncation* stops after a random number of steps and reweights,
so the gradient stays unbiased on average but gets noisier; in practice it rarely beats regular truncation.

**Clipping** only fixes explosions: training rescales the whole gradient of the parameters by
min(1, θ/‖g‖), so its norm is at most θ. The figure clips the stacked gradients with respect to the states
by the same rule, every step by the same factor. Nothing rescales a vanished one
back up. The remedy for vanishing is architectural: GRU and LSTM cells carry their memory through an
additive path controlled by gates, so the signal can pass many steps without being squashed at each one.
""")


def notes(r: Result) -> str:
    """The lab's notes under its figures, with the saturation rates of this page's matrix."""
    return _(NOTES).format(saturation=saturation(r).text)


SOURCE = (gradflow.recurrent_matrix, gradflow.linear_gradient_norms, gradflow.tanh_gradient_norms, gradflow.regime)
