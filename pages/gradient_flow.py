"""Lab 5, Gradient flow: the backpropagated gradient vanishes or explodes with the spectral radius of W_hh."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.nn import gradflow, gradflow_readings as readings
from core.labs import GradientFlow as Settings, controls_of
from ui import exercises, url_state
from ui.common import cite, header, show_source
from ui.lab import lab_fragment
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
    return readings.outside(a).text


def clipping_summary(a: gradflow.Analysis, theta: float) -> str:
    return f"{readings.clip_action(a, theta)} {readings.clip_share(a)}"


def regime_sentence(a: gradflow.Analysis) -> str:
    """The regime claim, its regime's name in the regime's colour."""
    c = readings.regime(a)
    return c.text.replace(f": {a.regime} (", f": :{REGIME_COLOURS[a.regime]}[**{a.regime}**] (", 1)


def metrics(s: Settings, a: gradflow.Analysis) -> None:
    final = float(a.shown[-1])
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Spectral radius ρ", f"{a.rho:.3f}")
    c2.metric(f"|g| after {s.T} steps", f"{final:.2e}")
    c3.metric("Growth per step", f"{a.growth:.3f}", help="(|g_T| / |g_0|)^(1/T), to compare with ρ")
    c4.metric("Regime", a.regime)
    st.markdown(regime_sentence(a))
    damped = readings.damping(a)
    if damped:
        st.info(damped.text)


@st.cache_data(show_spinner=False)
def saturation_note() -> str:
    """'What to try' on tanh's saturation, with the rates it is about (n = 32, T = 24, seed 0)."""
    return readings.saturation(readings.saturation_rates()).text


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


def view(s: Settings) -> None:
    """Everything the controls move: the metrics, the three figures and the notes."""
    exercises.hold_figures("gradient_flow")
    a, norms, eigenvalues, clipping = computed(s)
    metrics(s, a)
    show(norms, norms_summary(s, a), "norms")
    c1, c2 = st.columns(2)
    show(eigenvalues, eigenvalues_summary(a), "eigenvalues", c1)
    show(clipping, clipping_summary(a, s.theta), "clipping", c2)
    st.markdown(NOTES.format(saturation=saturation_note()))


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
    lab_fragment("gradient_flow", controls, view)
    show_source(gradflow.recurrent_matrix, gradflow.linear_gradient_norms, gradflow.tanh_gradient_norms,
                gradflow.regime)
    exercises.section("gradient_flow")


if __name__ == "__main__":
    main()
