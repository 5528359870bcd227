"""Lab 5, Gradient flow: the backpropagated gradient vanishes or explodes with the spectral radius of W_hh."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.nn import gradflow
from core.labs import GradientFlow as Settings, controls_of
from ui import exercises, url_state
from ui.common import cite, controls_beside_view, header, learner_errors, show_source
from ui.plots import frozen, show, style

REGIME_COLOURS = {"vanishing": "blue", "stable": "green", "exploding": "red"}


CONTROLS = controls_of("gradient_flow")   # declared in core.labs


def controls() -> Settings:
    return Settings(**{name: url_state.draw(s, **({"horizontal": True} if name == "kind" else {}))
                       for name, s in CONTROLS.items()})


def analyse(s: Settings) -> gradflow.Analysis:
    return gradflow.analyse(s.n, s.scale, s.T, s.kind, s.input_scale, s.seed, s.use_tanh, s.theta)


@st.cache_resource(show_spinner=False, max_entries=64)
def computed(s: Settings) -> tuple:
    """The analysis and the three figures for these settings, built once for every learner who sets them (a
    class told "now set T to 48" asks for the same ones at the same instant), as Forecasting does. Shared, so
    nothing changes them after."""
    a = analyse(s)
    return a, frozen(norms_figure(a)), frozen(eigenvalues_figure(a)), frozen(clipping_figure(a, s.theta))


def norms_figure(a: gradflow.Analysis) -> go.Figure:
    """Gradient norm against steps back: linear, through tanh, and the ρᵏ guide."""
    k = np.arange(len(a.linear))
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=k, y=a.linear, name="linear: (W_hhᵀ)ᵏ g", mode="lines+markers", marker=dict(size=4)))
    if a.tanh is not None:
        fig.add_trace(go.Scatter(x=k, y=a.tanh, name="through tanh", mode="lines+markers", marker=dict(size=4)))
    fig.add_trace(go.Scatter(x=k, y=a.guide, name="slope of ρ per step", line=dict(dash="dash", color="gray")))
    return style(fig, "Gradient norm against steps back", "steps back k", "gradient norm", height=380, log_y=True)


def eigenvalues_figure(a: gradflow.Analysis) -> go.Figure:
    """The eigenvalues of W_hh in the complex plane, with the unit circle."""
    t = np.linspace(0, 2 * np.pi, 200)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=np.cos(t), y=np.sin(t), name="unit circle", line=dict(color="gray", dash="dot")))
    fig.add_trace(go.Scatter(x=a.eigenvalues.real, y=a.eigenvalues.imag, mode="markers", name="eigenvalues",
                             marker=dict(size=6, color="#e45756")))
    lim = max(1.2, a.rho * 1.1)
    style(fig, "Eigenvalues of W_hh", None, None, height=380)
    fig.update_layout(xaxis=dict(range=[-lim, lim], title="real"), showlegend=False,
                      yaxis=dict(range=[-lim, lim], title="imaginary", scaleanchor="x"))
    return fig


def clipping_figure(a: gradflow.Analysis, theta: float) -> go.Figure:
    """Every step's gradient norm before and after clipping the whole gradient (one factor for all steps),
    beside capping each step on its own, which clipping does not do."""
    k = np.arange(len(a.shown))
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=k, y=a.shown, name="unclipped"))
    fig.add_trace(go.Scatter(x=k, y=a.clipped, name=f"clipped at θ = {theta:g} (× {a.clip_factor:.3g})"))
    fig.add_trace(go.Scatter(x=k, y=np.minimum(a.shown, theta), name="capping each step (not what clipping does)",
                             line=dict(dash="dot", color="gray")))
    return style(fig, "Clipping: one factor for every step", "steps back k", "gradient norm", height=380,
                 log_y=True, legend_below=True)


def norms_summary(s: Settings, a: gradflow.Analysis) -> str:
    linear = f"the linear gradient norm goes from 1 to {a.linear[-1]:.3g} over {s.T} steps"
    tanh = "" if a.tanh is None else f"; through tanh from 1 to {a.tanh[-1]:.3g}"
    return (f"Gradient norm against steps back: {linear}{tanh}, {a.growth:.3g} per step on the shown curve "
            f"(ρ = {a.rho:.3g}).")


def eigenvalues_summary(a: gradflow.Analysis) -> str:
    outside = int(np.sum(np.abs(a.eigenvalues) > 1 + 1e-9))
    return (f"The {len(a.eigenvalues)} eigenvalues of W_hh in the complex plane: the largest |λ|, the spectral "
            f"radius, is {a.rho:.3f}; {outside} lie outside the unit circle.")


def percent(share: float) -> str:
    """A share as a learner reads it: 99.8%, 3.2%, 0.05%, or under 0.01% (never 1.31e-05%)."""
    return f"{100 * share:.3g}%" if share >= 1e-4 else ("under 0.01%" if share > 0 else "0%")


def clipping_summary(a: gradflow.Analysis, theta: float) -> str:
    whole = a.whole_norm
    share = gradflow.distant_share(a.shown)
    stacked = ("The gradients with respect to the states, all steps stacked into one vector (a stand-in here: "
               "training clips the gradient of the parameters, g ← min(1, θ/‖g‖)·g), have the norm "
               f"{whole:.3g}")
    if a.clip_factor == 1.0:
        what = f"{stacked}, not above θ = {theta:g}: clipping leaves them alone."
    else:
        what = (f"{stacked}, above θ = {theta:g}: every step is multiplied by the same {a.clip_factor:.3g}, so the "
                "curve moves down without changing shape.")
    held = f"The older half of the steps carries {percent(share)} of the squared norm before clipping and after it"
    if a.regime == "vanishing":
        return f"{what} {held}: clipping cannot bring back a long-range signal that has vanished."
    if a.regime == "exploding":
        return f"{what} {held}: clipping keeps the steps' proportions, so the distant steps still dominate."
    return f"{what} {held}: clipping changes the size of the gradient, never how it is shared between steps."


def regime_sentence(s: Settings, a: gradflow.Analysis) -> str:
    """The regime, in words that follow the rate per step it is read from."""
    total = float(a.shown[-1])
    change = (f"grows by a factor of {a.growth:.3g} per step back ({total:.3g} times its size after {s.T} steps)"
              if a.growth > 1 else f"shrinks to {a.growth:.3g} of its size per step back ({total:.3g} after "
              f"{s.T} steps)")
    return (f"The gradient {change}: :{REGIME_COLOURS[a.regime]}[**{a.regime}**] (below "
            f"{gradflow.VANISH_RATE:g} per step counts as vanishing, above {gradflow.EXPLODE_RATE:g} as exploding; "
            f"ρ = {a.rho:.2f}).")


def metrics(s: Settings, a: gradflow.Analysis) -> None:
    final = float(a.shown[-1])
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Spectral radius ρ", f"{a.rho:.3f}")
    c2.metric(f"|g| after {s.T} steps", f"{final:.2e}")
    c3.metric("Growth per step", f"{a.growth:.3f}", help="(|g_T| / |g_0|)^(1/T), to compare with ρ")
    c4.metric("Regime", a.regime)
    st.markdown(regime_sentence(s, a))
    if s.use_tanh and a.rho > 1 and a.growth < a.rho * 0.9:
        effect = ("so a tanh RNN with ρ > 1 can still lose its long-range gradient, as it does here"
                  if a.regime == "vanishing" else "though here the gradient still grows" if a.regime == "exploding"
                  else "which holds the gradient near a steady size here")
        st.info(f"ρ is {a.rho:.2f} > 1, yet the gradient changes by only {a.growth:.2f} per step: each step back "
                f"also multiplies by the tanh slopes 1 - h², which average {a.mean_slope:.2f} in this run "
                f"({100 * a.saturated:.0f}% of the units have |h| > 0.99, where the slope is almost 0). "
                f"Those slopes damp the gradient, {effect}.")


@st.cache_data(show_spinner=False)
def saturation_note() -> str:
    """'What to try' on tanh's saturation, with the rates it is about (n = 32, T = 24, seed 0)."""
    rate = {(scale, inp): gradflow.analyse(32, scale, 24, input_scale=inp).growth for scale in (2.0, 4.0)
            for inp in (0.0, 5.0)}
    return (f"Turn tanh on and raise the input scale from 0 to 5: saturated units pass back less of the gradient. At "
            f"weight scale 2 the gradient's rate per step falls from {rate[2.0, 0.0]:.2f} to {rate[2.0, 5.0]:.2f}, "
            f"so a growing gradient now {'vanishes' if rate[2.0, 5.0] < gradflow.VANISH_RATE else 'grows slower'}; "
            f"at scale 4 it falls from {rate[4.0, 0.0]:.2f} to {rate[4.0, 5.0]:.2f}, "
            f"{'still growing' if rate[4.0, 5.0] > gradflow.EXPLODE_RATE else 'no longer growing'}.")


NOTES = """
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
"""


def main() -> None:
    url_state.page("gradflow")
    header("gradient_flow")
    st.markdown(
        "Training an RNN sends the error signal backwards through every time step. Each step back multiplies "
        "it by the same recurrent matrix (and, with tanh, by the slope of the activation), so after k steps it "
        "behaves like a k-th power. Powers of numbers below one shrink to nothing; above one they blow up. "
        "The largest |eigenvalue| of W_hh, its **spectral radius ρ**, decides which.")
    st.latex(r"\begin{gathered}\frac{\partial h_T}{\partial h_{T-k}} = \prod_{t=T-k+1}^{T} "
             r"\operatorname{diag}(1-h_t^2)\,W_{hh} \\ \|g_{T-k}\| \propto \rho^k \text{ for large } k"
             r"\ \text{(linear case)}\end{gathered}")
    st.caption("Notation: this page writes states as columns, hₜ = tanh(W_hh hₜ₋₁ + xₜ). The book and the RNN "
               "cell lab write them as rows, Hₜ = φ(Xₜ W_xh + Hₜ₋₁ W_hh + b_h), where the same matrix "
               "appears transposed; the norms and eigenvalue sizes are the same either way.")
    cite("9.7 Backpropagation Through Time")
    exercises.assignment("gradient_flow")
    s, view = controls_beside_view(controls)
    with view, learner_errors():
        exercises.hold_figures("gradient_flow")
        a, norms, eigenvalues, clipping = computed(s)
        metrics(s, a)
        show(norms, norms_summary(s, a), "norms")
        c1, c2 = st.columns(2)
        show(eigenvalues, eigenvalues_summary(a), "eigenvalues", c1)
        show(clipping, clipping_summary(a, s.theta), "clipping", c2)
        st.markdown(NOTES.format(saturation=saturation_note()))
    show_source(gradflow.recurrent_matrix, gradflow.linear_gradient_norms, gradflow.tanh_gradient_norms,
                gradflow.regime)
    exercises.section("gradient_flow")


if __name__ == "__main__":
    main()
