"""Lab 3, RNN cell: the recurrence stepped through time, and the proof that its gradients are right."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.nn import cell_demo, param_counts, rnn_ref, verify
from core.labs import controls_of
from ui import exercises, url_state
from ui.notebook import download_button
from ui.common import cite, header, learner_errors, plain, show_source
from ui.plots import frozen, show, style


CONTROLS = controls_of("rnn_cell")   # declared in core.labs


def word_controls() -> tuple[str, int, int]:
    c_word, c_h, c_seed = st.columns([2, 1, 1])
    with c_word:
        word = url_state.draw(CONTROLS["word"], hi=cell_demo.MAX_WORD)
    with c_h:
        hidden = url_state.draw(CONTROLS["h"])
    with c_seed:
        seed = url_state.draw(CONTROLS["seed"])
    return word, hidden, seed


def letter_labels(run: cell_demo.WordRun) -> list[str]:
    labels = [repr(c)[1:-1] if c != " " else "␣" for c in run.vocab.idx_to_token]
    labels[0] = "unk"
    return labels


def heat_figure(z: np.ndarray, title: str, labels_x: list[str], labels_y: list[str], x_title: str,
                y_title: str) -> go.Figure:
    """One matrix as a heatmap with its numbers written in, first row on top (as the book prints them)."""
    z = np.atleast_2d(z)
    fig = go.Figure(go.Heatmap(z=z, x=labels_x, y=labels_y, colorscale="RdBu", zmid=0.0, showscale=False,
                               text=np.round(z, 2), texttemplate="%{text}", textfont=dict(size=10), name=title))
    style(fig, title, x_title, y_title, height=120 + 26 * len(labels_y))
    fig.update_layout(yaxis=dict(autorange="reversed"), margin=dict(t=40, b=40, l=40, r=10))
    return fig


def probability_figure(run: cell_demo.WordRun, step: cell_demo.Step) -> go.Figure:
    chars = letter_labels(run)
    target = [i == step.target_id for i in range(len(step.P))]
    fig = go.Figure(go.Bar(x=chars, y=step.P, name="next-letter probability",
                           marker_color=["#D55E00" if t else "#0072B2" for t in target],
                           marker_pattern_shape=["/" if t else "" for t in target],
                           text=["next" if t else "" for t in target], textposition="outside"))
    style(fig, "softmax(Oₜ): the next letter", "letter", "probability", height=300)
    fig.update_layout(margin=dict(t=40, b=40, l=40, r=10))
    return fig


def step_figures(run: cell_demo.WordRun, step: cell_demo.Step) -> list[tuple[str, go.Figure, str]]:
    """The six views of one step, each a small figure with its own summary: input, previous and new state,
    the two weight matrices and the next-letter probabilities. Drawn three to a row, they stack on a phone."""
    chars, units = letter_labels(run), [f"h{i + 1}" for i in range(step.H.shape[1])]
    rng = lambda z: f"values {np.min(z):.2f} to {np.max(z):.2f}"  # noqa: E731
    best = int(np.argmax(step.P))
    return [
        ("x", heat_figure(step.X, "Xₜ: one-hot input", chars, ["x"], "letter", ""),
         f"The input at step {step.t}: a 1 for '{step.read}' (id {int(np.argmax(step.X))}), 0 elsewhere."),
        ("h-prev", heat_figure(step.H_prev, "Hₜ₋₁: previous state", units, ["h"], "unit", ""),
         f"The previous state at step {step.t}: {rng(step.H_prev)}."),
        ("h", heat_figure(step.H, "Hₜ: new state", units, ["h"], "unit", ""),
         f"The new state at step {step.t}: {rng(step.H)}."),
        ("w-xh", heat_figure(run.params["W_xh"], "W_xh (a row per letter)", units, chars, "unit", "letter"),
         f"The input weights W_xh, {run.params['W_xh'].shape[0]} letters by {run.params['W_xh'].shape[1]} units (the "
         f"one-hot input picks one row): {rng(run.params['W_xh'])}."),
        ("w-hh", heat_figure(run.params["W_hh"], "W_hh", units, units, "unit", "unit"),
         f"The recurrent weights W_hh, {run.params['W_hh'].shape[0]} by {run.params['W_hh'].shape[1]} (from each "
         f"unit of the previous state to each unit of the new one): {rng(run.params['W_hh'])}."),
        ("p", probability_figure(run, step),
         f"Next-letter probabilities: the true next letter '{step.target}' (the bar marked “next”) gets "
         f"{step.P[step.target_id]:.3f}; the likeliest is '{chars[best]}' with {step.P[best]:.3f}."),
    ]


def unrolled_summary(word: str, steps: int, current: int) -> str:
    return (f"The network reading “{word[:steps + 1]}”, unrolled over {steps} steps: inputs x1..x{steps} at the "
            f"bottom, states H1..H{steps} in the middle, outputs O1..O{steps} on top. Every step uses the same "
            f"W_xh, W_hh and W_hq; step {current} is marked.")


BOX_W, BOX_H = 0.56, 0.5   # the unrolled figure's boxes, in axis units: they shrink with the screen, labels stay clear


def unrolled_figure(word: str, steps: int, current: int) -> go.Figure:
    """The network unrolled through time: the same W_xh, W_hh, W_hq at every step (the current one marked). Boxes
    are drawn in axis units, so on a phone they narrow with the columns and the W_hh labels, above the boxes'
    tops between two columns, never cover one. The boxes and labels go in as two lists, set once (plotly checks
    the whole list again at each add_shape or add_annotation: 0.5 s for 7 steps, one at a time)."""
    shapes, notes = [], []
    for s in range(steps):
        boxes, labels = unrolled_step(word, s, s + 1 == current)
        shapes += boxes
        notes += labels
    fig = go.Figure(layout=dict(shapes=shapes, annotations=notes))
    for y, name, first in ((0, "inputs", "x"), (1, "states", "H"), (2, "outputs", "O")):   # the data behind the boxes
        fig.add_trace(go.Scatter(x=list(range(steps)), y=[y] * steps, mode="markers", marker=dict(opacity=0),
                                 text=[f"{first}{s + 1}" for s in range(steps)], name=name, showlegend=False,
                                 hoverinfo="skip"))
    style(fig, "Unrolled: the same weights at every step", None, None, height=300)
    fig.update_layout(xaxis=dict(visible=False, range=[-0.6, steps - 0.25]),   # room for the last W_hq
                      yaxis=dict(visible=False, range=[-0.6, 2.6]), margin=dict(t=50, b=10))
    return fig


def unrolled_step(word: str, s: int, now: bool) -> tuple[list[dict], list[dict]]:
    """Step s's column of the unrolled figure: its three boxes, and their labels with the arrows into and out of
    them (W_xh and W_hq upward, W_hh from the step before)."""
    boxes, notes = [], []
    for y, label, colour in ((0, f"x{s + 1}<br>'{word[s]}'", "#a0c4ff"), (1, f"H{s + 1}", "#ffd6a5"),
                             (2, f"O{s + 1}", "#caffbf")):
        boxes.append(dict(type="rect", x0=s - BOX_W / 2, x1=s + BOX_W / 2, y0=y - BOX_H / 2, y1=y + BOX_H / 2,
                          fillcolor="#ff8fab" if now else colour, line=dict(width=3 if now else 0, color="#111111")))
        notes.append(dict(x=s, y=y, text=label, showarrow=False, font=dict(size=12)))
    for y0, name in ((BOX_H / 2, "W_xh"), (1 + BOX_H / 2, "W_hq")):   # upward arrows, labelled beside them
        notes.append(dict(x=s, y=y0 + 1 - BOX_H, ax=s, ay=y0, xref="x", yref="y", axref="x", ayref="y", text="",
                          showarrow=True, arrowhead=2))
        notes.append(dict(x=s + 0.06, y=y0 + 0.32, xref="x", yref="y", text=name, showarrow=False, xanchor="left",
                          font=dict(size=10, color="#444")))
    if s:
        notes.append(dict(x=s - BOX_W / 2, y=1, ax=s - 1 + BOX_W / 2, ay=1, xref="x", yref="y", axref="x",
                          ayref="y", text="", showarrow=True, arrowhead=2))
        notes.append(dict(x=s - 0.5, y=1 + BOX_H / 2, xref="x", yref="y", text="W_hh", showarrow=False,
                          yanchor="bottom", yshift=1, font=dict(size=10, color="#444")))
    return boxes, notes


def memory_figure(V: int, h: int) -> go.Figure:
    """Parameters of an RNN (flat in the context length) against entries of an n-gram table (|V|^(k+1))."""
    ctx = np.arange(1, 21)
    rnn_params = sum(param_counts.rnn_parameter_terms(V, 0, h).values())  # one-hot inputs: no embedding
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=ctx, y=[rnn_params] * len(ctx), name="RNN parameters (any context)"))
    fig.add_trace(go.Scatter(x=ctx, y=[float(param_counts.ngram_table_size(V, int(k))) for k in ctx],
                             name="n-gram table entries |V|^(k+1)"))
    return style(fig, None, "context length k", "count", height=330, log_y=True)


# Built once per server for every learner at the same settings (a class moves t together), then shared: frozen.
@st.cache_resource(show_spinner=False, max_entries=256)
def step_views(word: str, hidden: int, seed: int, t: int) -> list[tuple[str, go.Figure, str]]:
    run = cell_demo.read_word(word, hidden, seed)
    return [(key, frozen(fig), summary) for key, fig, summary in step_figures(run, run.step(t))]


@st.cache_resource(show_spinner=False, max_entries=256)
def unrolled_view(word: str, steps: int, current: int) -> go.Figure:
    return frozen(unrolled_figure(word, steps, current))


@st.cache_resource(show_spinner=False, max_entries=64)
def memory_view(V: int, h: int) -> go.Figure:
    return frozen(memory_figure(V, h))


def network_with_memory() -> cell_demo.WordRun:
    st.header("1 · A network with memory")
    word, hidden, seed = word_controls()
    run = cell_demo.read_word(word, hidden, seed)
    step_through(run, word, hidden, seed)
    return run


@st.fragment
def step_through(run: cell_demo.WordRun, word: str, hidden: int, seed: int) -> None:
    """The time-step slider and what it moves, as a fragment: moving t reruns this part only, not the proof,
    the tables and the exercises below (a class stepping through a word together: 20 learners' reruns took
    0.9 s of server time as whole pages, 0.2 s as fragments). Nothing outside it depends on t."""
    with learner_errors():   # a fragment's own reruns do not pass through the page's
        step_at(run, word, hidden, seed)


def step_at(run: cell_demo.WordRun, word: str, hidden: int, seed: int) -> None:
    # A one-step word has nothing to slide through: a slider needs two distinct ends.
    t = url_state.draw(CONTROLS["t"], hi=run.steps) if run.steps > 1 else 1
    step = run.step(t)
    st.markdown(f"Step **t = {t}**: the network reads **'{plain(step.read)}'** and should predict "
                f"**'{plain(step.target)}'**. "
                f"It gives that letter probability {step.P[step.target_id]:.3f}, a loss of {step.loss:.3f} "
                f"(mean over all {run.steps} steps: {run.cache.loss:.3f}). The weights are random: nothing is "
                "learnt yet.")
    for row in (0, 3):
        for col, (key, fig, summary) in zip(st.columns(3), step_views(word, hidden, seed, t)[row:row + 3]):
            show(fig, summary, f"step-{key}", col)
    st.caption("Move t and watch Hₜ₋₁ become the previous step's Hₜ.")
    show(unrolled_view(run.word, run.steps, t), unrolled_summary(run.word, run.steps, t), "unrolled")


def two_products_or_one() -> None:
    st.header("2 · Two products or one")
    st.markdown("Stacking X and H side by side, and W_xh on top of W_hh, gives the same pre-activation with one "
                "matrix product: with the book's shapes, X (3×1) and H (3×4) side by side make a 3×5 matrix, "
                "W_xh (1×4) on top of W_hh (4×4) a 5×4 one, and (3×5)·(5×4) is the same 3×4 result as "
                "X·W_xh + H·W_hh. Fast implementations go the other way: X_t·W_xh does not depend on the state, "
                "so they compute it for every step at once before the loop and do only H·W_hh inside it (as "
                "`core/nn/fused.py` does). Random matrices of the book's shapes:")
    if st.button("New random matrices", key="cell.concat_new"):
        st.session_state["cell.concat_seed"] = st.session_state.get("cell.concat_seed", 0) + 1
    two, one = cell_demo.concat_example(st.session_state.get("cell.concat_seed", 0))
    q1, q2, q3 = st.columns(3)
    q1.markdown("X W_xh + H W_hh")
    q1.dataframe(pd.DataFrame(two).round(4), hide_index=True)
    q2.markdown("[X, H] @ [W_xh; W_hh]")
    q2.dataframe(pd.DataFrame(one).round(4), hide_index=True)
    q3.metric("Largest difference", difference_text(float(np.max(np.abs(one - two)))))


def memory_without_growing() -> None:
    st.header("3 · Memory without growing")
    st.markdown("However long the sequence, the RNN keeps the same weights and a state of fixed size. A table "
                "of n-gram counts needs an entry for every possible context, which grows exponentially.")
    m1, m2, m3 = st.columns(3)
    with m1:
        V = url_state.draw(CONTROLS["V"])
    with m2:
        h = url_state.draw(CONTROLS["h2"])
    with learner_errors():
        rnn = sum(param_counts.rnn_parameter_terms(V, 0, h).values())
        show(memory_view(V, h), f"With |V| = {V:,} and h = {h:,}, the RNN has {rnn:,} parameters for any context "
             f"length; an n-gram table with 20 tokens of context needs |V|^21 = 10^"
             f"{21 * math.log10(V):.1f} entries.", "memory")
        m3.metric("RNN state size", f"{h} numbers")


NB_HYPHEN = "\u2011"   # a hyphen a line never breaks at: "1e-6" stays on one line on a phone


def difference_text(x: float) -> str:
    """A largest difference: 4.4e-16 (rounding), or "0, exactly" (not 0.0e+00)."""
    return f"{x:.1e}" if x else "0, exactly"


def tol(x: float) -> str:
    """A tolerance as the table shows it (1e-6, 1e-12), for a sentence: its minus sign never starts a new line."""
    return f"{x:.0e}".replace("e-0", "e-").replace("-", NB_HYPHEN)


def tolerance_words() -> str:
    """The tolerances of core.nn.verify, in words (built from its constants)."""
    loose = (f"{tol(verify.TOL_ABS)} (absolute or relative)" if verify.TOL_ABS == verify.TOL_REL else
             f"{tol(verify.TOL_ABS)} absolute or {tol(verify.TOL_REL)} relative")
    return (f"{loose} where the two ways round differently, {tol(verify.TOL_IDENTITY)} where one float64 result is "
            "checked against an identity of the maths, and 0 where two ways of computing must agree to the last bit")


def largest_error_words(rows: list[tuple]) -> str:
    """The worst error among the checks that allow one, beside its tolerance; and how many allow none."""
    allowed = [(err, limit) for _, err, limit, _ in rows if limit > 0]
    exact = len(rows) - len(allowed)
    worst = max(allowed, default=None, key=lambda r: r[0] / r[1])
    said = f"{exact} {'check must' if exact == 1 else 'checks must'} agree to the last bit (tolerance 0)."
    if worst is None:
        return said
    error = f"{worst[0]:.1e}".replace("-", NB_HYPHEN)
    return f"Largest error against its tolerance: {error} (tolerance {tol(worst[1])}). " + said


def proof() -> None:
    st.header("4 · Proof: the gradients are right")
    st.markdown(
        "Backpropagation through time is easy to get subtly wrong, so how do you know a gradient is right? "
        "Compute it a second way and compare. Each check below does exactly that and names both ways:\n"
        "- **finite differences**: nudge one weight up and down by a tiny amount and watch the loss change; the "
        "slope needs no backpropagation at all;\n"
        "- **autograd**: let torch differentiate the same forward pass by itself;\n"
        "- **torch's own RNN** (`torch.nn.RNN`), given the same weights.\n\n"
        "The gradients RNN Lab uses were written out by hand, step back by step back, in numpy (the lab above "
        "shows that code) and again in torch for speed; both must match all three. A check passes when the two "
        f"numbers differ by no more than its tolerance: {tolerance_words()}. The same checks run from the command "
        "line: `python -m core verify`.")
    if st.button("Run the verification checks", type="primary", key="cell.verify"):
        with st.spinner("Checking ..."):
            results = verify.run_checks()
        st.session_state["cell.results"] = [(r.name, r.error, r.tolerance, r.passed) for r in results]
    if "cell.results" in st.session_state:
        rows = st.session_state["cell.results"]
        passed = sum(r[3] for r in rows)
        (st.success if passed == len(rows) else st.error)(f"{passed} passed, {len(rows) - passed} failed")
        st.caption(largest_error_words(rows))
        st.dataframe(pd.DataFrame(rows, columns=["check", "error", "tolerance", "passed"]), hide_index=True,
                     width="stretch", height=320, column_config={"error": st.column_config.NumberColumn(format="%.2e"),
                                    "tolerance": st.column_config.NumberColumn(format="%.0e")})


def check_one_gradient(run: cell_demo.WordRun) -> None:
    st.subheader("Check one gradient yourself")
    names = [k for k in rnn_ref.PARAM_ORDER if k in run.params] + ["H0"]
    f1, f2, f3 = st.columns(3)
    pname = f1.selectbox("Parameter", names, index=names.index("W_hh"), key="cell.fd_param")
    shape = run.cache.H[0].shape if pname == "H0" else run.params[pname].shape
    i = f2.number_input(f"Row (0..{shape[0] - 1})", 0, shape[0] - 1, 0, key="cell.fd_i")
    j = f3.number_input(f"Column (0..{shape[1] - 1})", 0, shape[1] - 1, 0, key="cell.fd_j") if len(shape) > 1 else None
    idx = (int(i),) if j is None else (int(i), int(j))
    _, grads = rnn_ref.loss_and_grads(run.params, run.x_ids, run.y_ids)
    analytic = float(grads[pname][idx])
    numeric = rnn_ref.finite_difference(run.params, run.x_ids, run.y_ids, pname, idx)
    g1, g2, g3 = st.columns(3)
    g1.metric("Hand-written BPTT", f"{analytic:.10f}")
    g2.metric("Finite differences", f"{numeric:.10f}")
    g3.metric("Relative error", f"{verify.rel_err(analytic, numeric):.1e}")


def first_steps(run: cell_demo.WordRun) -> dict[str, int]:
    """Each letter the word feeds in (every letter but its last), with the first step that reads it."""
    steps: dict[str, int] = {}
    for t, token in enumerate(run.x_ids[0], start=1):
        steps.setdefault(run.vocab.token_text(int(token)), t)
    return steps


def one_hot_or_embedding(run: cell_demo.WordRun) -> None:
    st.header("5 · One-hot or an embedding")
    steps = first_steps(run)
    with st.columns([1, 3])[0]:
        letter = url_state.draw(CONTROLS["letter"], choices=list(steps), default=next(iter(steps)),
                                format_func=lambda c: "␣ (space)" if c == " " else c)
    t = steps[letter]
    look = cell_demo.one_hot_lookup(run, t)
    st.markdown(
        f"A one-hot input is a row of zeros with a single 1, at the token's id. Multiplying it by W_xh therefore "
        f"picks out one row of W_xh: the letter '{plain(letter)}' (fed in at step t = {t}) has id "
        f"{look.token_id}, and X_t·W_xh is row {look.token_id} of W_xh. That is why real implementations look the "
        "row up instead of multiplying (`core/nn/fused.py` and the scratch RNN do).")
    c1, c2, c3 = st.columns([2, 2, 1])
    c1.markdown("X_t · W_xh (a product)")
    c1.dataframe(pd.DataFrame([look.product]).round(4), hide_index=True)
    c2.markdown(f"row {look.token_id} of W_xh (a lookup)")
    c2.dataframe(pd.DataFrame([look.row]).round(4), hide_index=True)
    c3.metric("Product minus lookup, largest", difference_text(look.difference))
    cases = [(len(run.vocab), run.params["W_hh"].shape[0], 2), (28, 256, 64), (10_000, 256, 256), (10_000, 256, 64)]
    st.markdown(
        "An **embedding** makes that row its own small learnt vector of d numbers (a table E of |V| × d) and then "
        f"multiplies it by a d × h W_xh, and similar tokens can learn similar rows. "
        f"{param_counts.input_choice(cases)}")
    rows = []
    for V, h, d in cases:
        rows.append({"|V|": V, "h": h, "one-hot: W_xh (|V| × h)": param_counts.input_parameters(V, h, 0),
                     "d": d, "embedding: E (|V| × d) + W_xh (d × h)": param_counts.input_parameters(V, h, d)})
    counts = {name: st.column_config.NumberColumn(format="localized") for name in rows[0] if name not in ("h", "d")}
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", column_config=counts)   # 2,560,000


def main() -> None:
    url_state.page("cell")
    header("rnn_cell")
    download_button("rnn_cell")
    st.markdown(
        "A recurrent network reads a sequence one token at a time and keeps a **hidden state** H, a small vector "
        "that summarises everything read so far. Each step mixes the new input with the old state through the "
        "same two weight matrices, squashes the result with tanh, and reads a prediction for the next token off "
        "the new state.")
    st.latex(r"\begin{gathered}H_t = \tanh(X_t W_{xh} + H_{t-1} W_{hh} + b_h) \\ O_t = H_t W_{hq} + b_q"
             r"\qquad \ell_t = -\log \operatorname{softmax}(O_t)_{y_t}\end{gathered}")
    cite("9.4 Recurrent Neural Networks and 9.5 Recurrent Neural Network Implementation from Scratch")
    exercises.assignment("rnn_cell")
    exercises.hold_figures("rnn_cell")
    run = None
    with learner_errors():
        run = network_with_memory()
    two_products_or_one()
    memory_without_growing()
    proof()
    with learner_errors():
        check_one_gradient(run)
        one_hot_or_embedding(run)
    show_source(rnn_ref.cell, rnn_ref.forward, rnn_ref.backward, title="The code of the cell and its backward pass")
    exercises.section("rnn_cell")


if __name__ == "__main__":
    main()
