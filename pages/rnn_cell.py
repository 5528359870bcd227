"""Lab 3, RNN cell: draws what core.labs.rnn_cell computes (settings, figures, readings all there), and runs the
proof that its gradients are right (core.nn.verify)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core.i18n import _, current, sentences
from core.labs import controls_of, rnn_cell as lab
from core.nn import cell_demo, rnn_ref, verify
from core.nn.verify.words import words as check_words
from ui import exercises, url_state
from ui.notebook import download_button
from ui.common import cite, header, learner_errors, plain, show_source
from ui.plots import frozen_chart, show_chart

CONTROLS = controls_of(lab.KEY)


def word_controls() -> lab.Settings:
    c_word, c_h, c_seed = st.columns([2, 1, 1])
    with c_word:
        word = url_state.draw(CONTROLS["word"], hi=cell_demo.MAX_WORD)
    with c_h:
        hidden = url_state.draw(CONTROLS["h"])
    with c_seed:
        seed = url_state.draw(CONTROLS["seed"])
    return lab.Settings(word=word, h=hidden, seed=seed)


# Built once per server for every learner at the same settings (a class moves t together), then shared: frozen.
@st.cache_resource(show_spinner=False, max_entries=256)
def step_views(word: str, hidden: int, seed: int, t: int, lang: str) -> list:   # lang: their words' language
    run = lab.read(lab.Settings(word=word, h=hidden, seed=seed))
    return [frozen_chart(c) for c in lab.step_charts(run, run.step(t))]


@st.cache_resource(show_spinner=False, max_entries=256)
def unrolled_view(word: str, steps: int, current: int, lang: str):
    return frozen_chart(lab.unrolled_chart(word, steps, current))


@st.cache_resource(show_spinner=False, max_entries=64)
def memory_view(V: int, h: int, lang: str):
    return frozen_chart(lab.memory_chart(V, h))


def network_with_memory() -> cell_demo.WordRun:
    st.header(_("1 · A network with memory"))
    s = word_controls()
    run = lab.read(s)
    step_through(run, s)
    return run


@st.fragment
def step_through(run: cell_demo.WordRun, s: lab.Settings) -> None:
    """The time-step slider and what it moves, as a fragment: moving t reruns this part only, not the proof,
    the tables and the exercises below (a class stepping through a word together: 20 learners' reruns took
    0.9 s of server time as whole pages, 0.2 s as fragments). Nothing outside it depends on t."""
    with learner_errors():   # a fragment's own reruns do not pass through the page's
        step_at(run, s)


def step_at(run: cell_demo.WordRun, s: lab.Settings) -> None:
    # A one-step word has nothing to slide through: a slider needs two distinct ends.
    t = url_state.draw(CONTROLS["t"], hi=run.steps) if run.steps > 1 else 1
    st.markdown(plain(lab.step_words(run, run.step(t)), 1000))
    charts = step_views(s.word, s.h, s.seed, t, current())
    for row in (0, 3):
        for col, chart in zip(st.columns(3), charts[row:row + 3]):
            show_chart(chart, col)
    st.caption(_("Move t and watch Hₜ₋₁ become the previous step's Hₜ."))
    show_chart(unrolled_view(run.word, run.steps, t, current()))


def two_products_or_one() -> None:
    st.header(_("2 · Two products or one"))
    st.markdown(_("Stacking X and H side by side, and W_xh on top of W_hh, gives the same pre-activation with one "
                "matrix product: with the book's shapes, X (3×1) and H (3×4) side by side make a 3×5 matrix, "
                "W_xh (1×4) on top of W_hh (4×4) a 5×4 one, and (3×5)·(5×4) is the same 3×4 result as "
                "X·W_xh + H·W_hh. Fast implementations go the other way: X_t·W_xh does not depend on the state, "
                "so they compute it for every step at once before the loop and do only H·W_hh inside it (as "
                "`core/nn/fused.py` does). Random matrices of the book's shapes:"))
    if st.button(_("New random matrices"), key="rnn_cell.concat_new"):
        st.session_state["rnn_cell.concat_seed"] = st.session_state.get("rnn_cell.concat_seed", 0) + 1
    two, one = cell_demo.concat_example(st.session_state.get("rnn_cell.concat_seed", 0))
    q1, q2, q3 = st.columns(3)
    q1.markdown("X W_xh + H W_hh")
    q1.dataframe(pd.DataFrame(two).round(4), hide_index=True)
    q2.markdown("[X, H] @ [W_xh; W_hh]")
    q2.dataframe(pd.DataFrame(one).round(4), hide_index=True)
    q3.metric(_("Largest difference"), lab.difference_text(float(np.max(np.abs(one - two)))))


def memory_without_growing() -> None:
    st.header(_("3 · Memory without growing"))
    st.markdown(_("However long the sequence, the RNN keeps the same weights and a state of fixed size. A table of "
                  "n-gram counts needs an entry for every possible context, which grows exponentially."))
    m1, m2, m3 = st.columns(3)
    with m1:
        V = url_state.draw(CONTROLS["V"])
    with m2:
        h = url_state.draw(CONTROLS["h2"])
    with learner_errors():
        show_chart(memory_view(V, h, current()))
        m3.metric(_("RNN state size"), _("{h} numbers").format(h=h))


def proof() -> None:
    st.header(_("4 · Proof: the gradients are right"))
    st.markdown(_(
        "Backpropagation through time is easy to get subtly wrong, so how do you know a gradient is right? "
        "Compute it a second way and compare. Each check below does exactly that and names both ways:\n"
        "- **finite differences**: nudge one weight up and down by a tiny amount and watch the loss change; the "
        "slope needs no backpropagation at all;\n"
        "- **autograd**: let torch differentiate the same forward pass by itself;\n"
        "- **torch's own RNN** (`torch.nn.RNN`), given the same weights.\n\n"
        "The gradients RNN Lab uses were written out by hand, step back by step back, in numpy (the lab above "
        "shows that code) and again in torch for speed; both must match all three. A check passes when the two "
        "numbers differ by no more than its tolerance: {tolerances}. The same checks run from the command line: "
        "`python -m core verify`.").format(tolerances=lab.tolerance_words()))
    if st.button(_("Run the verification checks"), type="primary", key="rnn_cell.verify"):
        with st.spinner(_("Checking ...")):
            results = verify.run_checks()
        st.session_state["rnn_cell.results"] = [(r.name, r.error, r.tolerance, r.passed) for r in results]
    if "rnn_cell.results" in st.session_state:
        rows = st.session_state["rnn_cell.results"]
        passed = sum(r[3] for r in rows)
        (st.success if passed == len(rows) else st.error)(_("{passed} passed, {failed} failed").format(
            passed=passed, failed=len(rows) - passed))
        st.caption(lab.largest_error_words(rows))
        check, error, tolerance, ok = _("check"), _("error"), _("tolerance"), _("passed")
        shown = [(check_words(name), err, tol, passed) for name, err, tol, passed in rows]   # in the page's language
        st.dataframe(pd.DataFrame(shown, columns=[check, error, tolerance, ok]), hide_index=True, width="stretch",
                     height=320, column_config={error: st.column_config.NumberColumn(format="%.2e"),
                                                tolerance: st.column_config.NumberColumn(format="%.0e")})


def check_one_gradient(run: cell_demo.WordRun) -> None:
    st.subheader(_("Check one gradient yourself"))
    names = [k for k in rnn_ref.PARAM_ORDER if k in run.params] + ["H0"]
    f1, f2, f3 = st.columns(3)
    pname = f1.selectbox(_("Parameter"), names, index=names.index("W_hh"), key="rnn_cell.fd_param")
    shape = run.cache.H[0].shape if pname == "H0" else run.params[pname].shape
    i = f2.number_input(_("Row (0..{last})").format(last=shape[0] - 1), 0, shape[0] - 1, 0, key="rnn_cell.fd_i")
    j = (f3.number_input(_("Column (0..{last})").format(last=shape[1] - 1), 0, shape[1] - 1, 0, key="rnn_cell.fd_j")
         if len(shape) > 1 else None)
    idx = (int(i),) if j is None else (int(i), int(j))
    analytic, numeric, error = lab.gradient_check(run, pname, idx)
    g1, g2, g3 = st.columns(3)
    g1.metric(_("Hand-written BPTT"), f"{analytic:.10f}")
    g2.metric(_("Finite differences"), f"{numeric:.10f}")
    g3.metric(_("Relative error"), f"{error:.1e}")


def one_hot_or_embedding(run: cell_demo.WordRun) -> None:
    st.header(_("5 · One-hot or an embedding"))
    steps = lab.first_steps(run)
    with st.columns([1, 3])[0]:
        letter = url_state.draw(CONTROLS["letter"], choices=list(steps), default=next(iter(steps)),
                                format_func=lambda c: _("␣ (space)") if c == " " else c)
    look = lab.lookup(run, letter)
    st.markdown(_(
        "A one-hot input is a row of zeros with a single 1, at the token's id. Multiplying it by W_xh therefore picks "
        "out one row of W_xh: the letter '{letter}' (fed in at step t = {t}) has id {id}, and X_t·W_xh is row {id} of "
        "W_xh. That is why real implementations look the row up instead of multiplying (`core/nn/fused.py` and the "
        "scratch RNN do).").format(letter=plain(letter), t=steps[letter], id=look.token_id))
    c1, c2, c3 = st.columns([2, 2, 1])
    c1.markdown(_("X_t · W_xh (a product)"))
    c1.dataframe(pd.DataFrame([look.product]).round(4), hide_index=True)
    c2.markdown(_("row {id} of W_xh (a lookup)").format(id=look.token_id))
    c2.dataframe(pd.DataFrame([look.row]).round(4), hide_index=True)
    c3.metric(_("Product minus lookup, largest"), lab.difference_text(look.difference))
    cases = lab.input_cases(run)
    st.markdown(sentences(_(
        "An **embedding** makes that row its own small learnt vector of d numbers (a table E of |V| × d) and then "
        "multiplies it by a d × h W_xh, and similar tokens can learn similar rows."), lab.inputs_claim(cases)))
    rows = lab.input_table(cases)
    counts = {name: st.column_config.NumberColumn(format="localized") for name in rows[0] if name not in ("h", "d")}
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", column_config=counts)   # 2,560,000


def main() -> None:
    url_state.page("rnn_cell")
    header(lab.KEY)
    download_button(lab.KEY)
    st.markdown(_(lab.INTRO))
    st.latex(lab.FORMULA)
    cite(lab.SECTION)
    exercises.assignment(lab.KEY)
    exercises.hold_figures(lab.KEY)
    run = None
    with learner_errors():
        run = network_with_memory()
    two_products_or_one()
    memory_without_growing()
    proof()
    with learner_errors():
        check_one_gradient(run)
        one_hot_or_embedding(run)
    show_source(*lab.SOURCE, title=_("The code of the cell and its backward pass"))
    exercises.section(lab.KEY)


if __name__ == "__main__":
    main()
