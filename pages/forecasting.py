"""Lab 1, Forecasting: an AR(tau) model on a noisy sine, one-step vs k-step forecasts."""
import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.forecast import fit_ar, make_series, mse_by_horizon, one_step_mse, predict_k_step
from ui import url_state
from ui.common import cite, learner_errors, show_source

BOOK_KS = (1, 4, 16, 64)

url_state.page("forecasting")
st.title("📈 Forecasting")
st.markdown(
    "A sequence model guesses the next value from the values before it. Here the data is a sine wave "
    "buried in noise, and the model is the simplest one there is: a weighted sum of the last "
    r"$\tau$ values plus a bias, fitted in one shot by least squares."
)
st.latex(r"x_t = \sin(0.01\,t) + \epsilon_t,\quad \epsilon_t\sim\mathcal N(0,\sigma^2)"
         r"\qquad \hat x_t = w_1 x_{t-\tau} + \dots + w_\tau x_{t-1} + b")
cite("9.1 Working with Sequences")

controls, view = st.columns([1, 3], gap="large")
with controls:
    st.subheader("Controls")
    T = url_state.int_slider("Series length T", "T", 1000, 100, 5000, step=50)
    n_train = url_state.int_slider("Training points n_train", "n_train", 600, 50, T - 1, step=10,
                                help="The model is fitted on the first n_train points only.")
    tau = url_state.int_slider("Window τ (tau)", "tau", 4, 1, 64,
                            help="How many past values the model looks at.")
    k = url_state.int_slider("Horizon k", "k", 16, 1, 64,
                          help="Steps ahead: the model feeds its own guesses back k-1 times.")
    sigma = url_state.float_slider("Noise σ (sigma)", "sigma", 0.2, 0.0, 1.0, 0.01)
    seed = url_state.int_input("Seed", "seed", 0, 0, 10_000)


@st.cache_data(show_spinner=False, max_entries=64)
def series(T: int, sigma: float, seed: int) -> np.ndarray:
    return make_series(T, sigma, seed)


with view, learner_errors():
    x = series(T, sigma, seed)
    model = fit_ar(x, tau, n_train)
    train_mse, test_mse = one_step_mse(model, x, n_train)
    pred_k = predict_k_step(model, x, k)
    test_k = pred_k[n_train:] - x[n_train:]
    test_k = test_k[np.isfinite(test_k)]
    k_mse = float(np.mean(test_k ** 2)) if test_k.size else float("nan")
    max_k = min(64, T - n_train - tau)
    horizon = mse_by_horizon(model, x, max(1, max_k), start=n_train) if max_k >= 1 else None

    m1, m2, m3 = st.columns(3)
    m1.metric("One-step MSE, training range", f"{train_mse:.4f}")
    m2.metric("One-step MSE, test range", f"{test_mse:.4f}")
    m3.metric(f"{k}-step MSE, test range", f"{k_mse:.4f}",
              delta=f"{k_mse / test_mse:.1f}× one-step" if test_mse > 0 else None, delta_color="inverse")

    t = np.arange(1, T + 1)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=t, y=x, name="data", line=dict(color="#9aa5b1", width=1)))
    for kk in sorted(set(BOOK_KS) | {k}):
        if kk > T - tau:
            continue
        fig.add_trace(go.Scatter(x=t, y=predict_k_step(model, x, kk), name=f"{kk}-step",
                                 line=dict(width=2.5 if kk == k else 1.5),
                                 visible=True if kk in (1, k) else "legendonly"))
    fig.add_vrect(x0=1, x1=n_train, fillcolor="#4c78a8", opacity=0.06, line_width=0,
                  annotation_text="training range", annotation_position="top left")
    fig.update_layout(title="Data and forecasts (click the legend to show the book's k = 4, 16, 64)",
                      xaxis_title="time t", yaxis_title="x", height=420, margin=dict(t=50, b=40),
                      legend=dict(orientation="h", y=-0.2))
    st.plotly_chart(fig, width="stretch")

    if horizon is not None:
        hfig = go.Figure(go.Scatter(x=np.arange(1, len(horizon) + 1), y=horizon, mode="lines+markers",
                                    name="test MSE", marker=dict(size=4)))
        if k <= len(horizon):
            hfig.add_trace(go.Scatter(x=[k], y=[horizon[k - 1]], mode="markers", name=f"k = {k}",
                                      marker=dict(size=12, color="#e45756")))
        hfig.add_hline(y=float(np.var(x[n_train:])), line_dash="dash",
                       annotation_text="variance of the test data (a constant guess)")
        hfig.update_layout(title="Test MSE against the horizon k", xaxis_title="k", yaxis_title="MSE",
                           yaxis_type="log", height=360, margin=dict(t=50, b=40))
        st.plotly_chart(hfig, width="stretch")

    st.markdown(
        f"**Reading it.** One step ahead, the model only has to undo a little noise, so its error stays "
        f"close to σ² = {sigma ** 2:.3f}. Asked for k steps, it must build on its own guesses: every "
        "guess carries an error, the next guess inherits it, and the errors compound. The long-horizon "
        "forecasts drift towards a smooth curve that forgets the data; the MSE curve climbs towards "
        "the error of simply guessing a constant."
    )
    with st.expander("Fitted weights"):
        st.write({"bias": round(model.bias, 6),
                  **{f"w{i + 1} (x[t-{tau - i}])": round(float(w), 6) for i, w in enumerate(model.weights)}})

show_source(make_series, fit_ar, predict_k_step, mse_by_horizon)
