"""Lab 5, Gradient flow: the backpropagated gradient vanishes or explodes with the spectral radius of W_hh."""
import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core import gradflow
from ui import url_state
from ui.common import cite, learner_errors, show_source

url_state.page("gradflow")
st.title("🌊 Gradient flow")
st.markdown(
    "Training an RNN sends the error signal backwards through every time step. Each step back multiplies "
    "it by the same recurrent matrix (and, with tanh, by the slope of the activation), so after k steps it "
    "behaves like a k-th power. Powers of numbers below one shrink to nothing; above one they blow up. "
    "The largest |eigenvalue| of W_hh, its **spectral radius ρ**, decides which."
)
st.latex(r"\frac{\partial h_T}{\partial h_{T-k}} = \prod_{t=T-k+1}^{T} \operatorname{diag}(1-h_t^2)\,W_{hh}"
         r"\qquad \|g_{T-k}\| \approx \rho^k \|g_T\|\ \text{(linear case)}")
cite("9.7 Backpropagation Through Time")

SCALES = [0.25, 0.35, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0, 1.05, 1.1, 1.2, 1.3, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0]
controls, view = st.columns([1, 3], gap="large")
with controls:
    st.subheader("Controls")
    scale = url_state.select_slider("Weight scale (× W_hh)", "scale", 1.0, SCALES,
                                 help="Multiplies the random matrix; ρ scales with it.")
    n = url_state.int_slider("Hidden size n", "n", 32, 2, 256)
    T = url_state.int_slider("Steps back T", "T", 24, 1, 200)
    kind = url_state.choice("Matrix kind", "kind", "gaussian", gradflow.KINDS, widget="radio", horizontal=True)
    use_tanh = url_state.toggle("Through tanh", "tanh", True, help="Off: the purely linear recurrence.")
    input_scale = url_state.float_slider("Input scale", "input", 1.0, 0.0, 5.0, 0.1,
                                      help="Larger inputs push tanh into saturation.")
    theta = url_state.float_slider("Clipping threshold θ", "theta", 1.0, 0.1, 10.0, 0.1)
    seed = url_state.int_input("Seed", "seed", 0, 0, 10_000)

with view, learner_errors():
    a = gradflow.analyse(n, scale, T, kind, input_scale, seed, use_tanh, theta)
    shown = a.shown
    final = float(shown[-1])
    colour = {"vanishing": "blue", "stable": "green", "exploding": "red"}[a.regime]
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Spectral radius ρ", f"{a.rho:.3f}")
    c2.metric(f"|g| after {T} steps", f"{final:.2e}")
    c3.metric("Growth per step", f"{a.growth:.3f}", help="(|g_T| / |g_0|)^(1/T), to compare with ρ")
    c4.metric("Regime", a.regime)
    st.markdown(f"ρ {a.rho:.2f}, |g| after {T} steps {final:.1e}: :{colour}[**{a.regime}**] "
                f"(below {gradflow.VANISH_BELOW:g} counts as vanishing, above {gradflow.EXPLODE_ABOVE:g} as exploding).")
    if use_tanh and a.rho > 1 and a.growth < a.rho * 0.9:
        st.info(f"ρ is {a.rho:.2f} > 1, yet the gradient grows only by {a.growth:.2f} per step: the tanh units "
                "saturate (|h| near 1, slope 1 - h² near 0), and each step back is damped by those small slopes. "
                "That is why a tanh RNN with a large ρ can still lose its long-range gradient.")

    k = np.arange(T + 1)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=k, y=a.linear, name="linear: (W_hhᵀ)ᵏ g", mode="lines+markers", marker=dict(size=4)))
    if a.tanh is not None:
        fig.add_trace(go.Scatter(x=k, y=a.tanh, name="through tanh", mode="lines+markers", marker=dict(size=4)))
    fig.add_trace(go.Scatter(x=k, y=a.rho ** k, name="ρᵏ", line=dict(dash="dash", color="gray")))
    fig.update_layout(title="Gradient norm against steps back", xaxis_title="steps back k", yaxis_title="|g|",
                      yaxis_type="log", height=380, margin=dict(t=50, b=40))
    st.plotly_chart(fig, width="stretch")

    left, right = st.columns(2)
    t = np.linspace(0, 2 * np.pi, 200)
    efig = go.Figure()
    efig.add_trace(go.Scatter(x=np.cos(t), y=np.sin(t), name="unit circle", line=dict(color="gray", dash="dot")))
    efig.add_trace(go.Scatter(x=a.eigenvalues.real, y=a.eigenvalues.imag, mode="markers", name="eigenvalues",
                              marker=dict(size=6, color="#e45756")))
    lim = max(1.2, a.rho * 1.1)
    efig.update_layout(title="Eigenvalues of W_hh", xaxis=dict(range=[-lim, lim], title="real"),
                       yaxis=dict(range=[-lim, lim], title="imaginary", scaleanchor="x"), height=380,
                       margin=dict(t=50, b=40), showlegend=False)
    left.plotly_chart(efig, width="stretch")
    cfig = go.Figure()
    cfig.add_trace(go.Scatter(x=k, y=shown, name="unclipped"))
    cfig.add_trace(go.Scatter(x=k, y=a.clipped, name=f"clipped at θ = {theta:g}"))
    cfig.update_layout(title="Clipping caps the norm, keeps the direction", xaxis_title="steps back k",
                       yaxis_title="|g|", yaxis_type="log", height=380, margin=dict(t=50, b=40))
    right.plotly_chart(cfig, width="stretch")

    st.markdown("""
**What to try.** Slide the scale: around ρ ≈ 1 the linear curve is flat; below, it falls off a cliff; above,
it shoots up. Switch to an orthogonal matrix: every eigenvalue sits on the unit circle and the linear norm
stays exactly 1. Turn tanh on with a big input scale and a large ρ: the curve bends down anyway.

**Truncation.** Backpropagating through all T steps (*full*) is exact but costly and unstable when ρ > 1.
*Regular truncation* stops after a fixed window (what RNN Lab's training does between windows), trading
long-range signal for stability. *Randomized truncation* stops after a random number of steps and reweights,
so the gradient stays unbiased on average but gets noisier; in practice it rarely beats regular truncation.

**Clipping** only fixes explosions: it rescales a huge gradient down to θ. Nothing rescales a vanished one
back up. The remedy for vanishing is architectural: GRU and LSTM cells carry their memory through an
additive path controlled by gates, so the signal can pass many steps without being squashed at each one.
""")

show_source(gradflow.recurrent_matrix, gradflow.linear_gradient_norms, gradflow.tanh_gradient_norms, gradflow.regime)
