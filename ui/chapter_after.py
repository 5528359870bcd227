"""The chapter, after the four acts: three claims to poke at in the labs, BPTT in detail, the concise version
timed here, three things to remember, and every lab. Part of the chapter's page (pages/chapter.py draws it as
its fifth stop; its figure is core.labs.chapter's), not a page of its own."""
from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from core.i18n import N_, _, sentences
from core.labs import LABS, chapter, controls_of
from core.lesson import cell_timing
from ui import texts, url_state
from ui.common import deeper, lab_link, learner_errors, time_left
from ui.plots import show


CLAIMS = (  # (claim, lab, link text, the lab's controls by their declared names in core.labs)
    (N_("Forecasts get worse with the horizon: each step ahead builds on the last guess, until far enough ahead "
        "the forecast does no better than guessing a constant."), "forecasting",
     N_("Push k to 64: its error reaches a constant guess's"), {"tau": 4, "k": 64}),
    (N_("A character RNN trained on the book captures its statistics: spelling, common words, where spaces go."),
     "sampling", N_("Sample from the pretrained character RNN (three layers of 384 units) at T = 1, its own "
                    "distribution"), {"temperature": 1.0}),
    (N_("The recurrent weights sit between vanishing and exploding gradients."), "gradient_flow",
     N_("Turn the weight scale past 1, without tanh: the gradient explodes"), {"scale": 1.2, "use_tanh": False}),
)


def claims() -> None:
    st.subheader(_("Three claims, yours to poke at"))
    for n, (claim, lab_key, text, query) in enumerate(CLAIMS, 1):
        st.markdown(f"{n}. {_(claim)}")
        deeper(lab_key, text, **query)


def bptt_in_detail() -> None:
    st.subheader(_("Backpropagation through time, in detail"))
    st.markdown(_("The loss at step t depends on the state at every earlier step through the same W_hh. Leaving out "
                "the tanh slopes, the gradient reaching a state k steps back has been multiplied by W_hhᵀ k times: "
                "a sum of terms with growing powers of W_hhᵀ."))
    st.latex(r"\frac{\partial L}{\partial h_t} = \sum_{j \ge t} (W_{hh}^\top)^{\,j-t}\, "
             r"\frac{\partial \ell_j}{\partial h_j}")
    st.caption(_("Column convention. The sum leaves out tanh's slopes: it is the linear case, the curve labelled "
                 "“linear” below."))
    st.markdown(_("What gradient descent and clipping act on is the gradient of the weights, and the shared W_hh "
                "collects one term from every step: that step's state gradient (the quantity above, whose size the "
                "figure shows), through its tanh slope, times the state the step read. With h_t = tanh(a_t) and "
                "a_t = W_hh h_{t-1} + W_xh x_t + b:"))
    st.latex(r"\frac{\partial L}{\partial W_{hh}} = \sum_{t=1}^{T} \Big(\frac{\partial L}{\partial h_t} "
             r"\odot \big(1 - h_t \odot h_t\big)\Big)\, h_{t-1}^\top")
    scale = url_state.draw(controls_of("chapter")["scale"])
    with learner_errors():
        chart = chapter.bptt_chart(chapter.bptt(scale))
    show(chart.figure, chart.summary, chart.key)
    st.markdown(_(
        "- **Full** backpropagation runs the sum all the way back: exact, but slow and numerically fragile.\n"
        "- **Regular truncation** stops after a fixed number of steps (the time steps per window of the Training lab): "
        "cheap, and biased towards short-range dependencies.\n"
        "- **Randomized truncation** stops after a random number of steps and reweights the terms so the "
        "gradient is right on average; in practice it does no better than regular truncation.\n\n"
        "Clipping rescales the whole gradient when its norm exceeds θ: it tames explosions but cannot bring back "
        "a vanished gradient. Gates (GRU, LSTM) give the gradient a path that is not multiplied by W_hh at every "
        "step."))
    deeper("gates", N_("The remedy, trained live: a plain RNN forgets across a delay, a GRU and an LSTM remember"))


def concise_version(raw: str | None) -> None:
    st.subheader(_("The concise version"))
    st.markdown(_("A recurrence written as a Python loop, one matrix product per step, and PyTorch's `nn.RNN` "
                  "compute the same thing. Both, on the passage run, timed on this server:"))
    left, right = st.columns(2)
    left.code("XW = X @ W_xh   # every step's input term at once\nfor t in range(steps):\n"
              "    H = torch.tanh(XW[:, t] + H @ W_hh + b_h)\n    outputs.append(H)", language="python")
    right.code("rnn = nn.RNN(len(vocab), hidden, batch_first=True)\noutputs, H = rnn(X, H)", language="python")
    if raw is None:
        texts.missing_corpus_message()
        return
    if st.button(_("Time both: four epochs of each"), key="chapter.time_cells"):
        bar, t0 = st.progress(0.0, text=_("Starting the first run ...")), time.perf_counter()

        def shown(done: float, label: str) -> None:
            left = time_left(done, time.perf_counter() - t0)
            bar.progress(min(done, 1.0), text=_("Training {cell}: {done:.0f}% of both runs{left}").format(
                cell=_(label), done=100 * done, left=left))
        st.session_state["chapter.timings"] = cell_timing.time_cells(raw, on_progress=shown)
        bar.empty()
    timings = st.session_state.get("chapter.timings")
    if timings:
        st.dataframe(pd.DataFrame([{_("cell"): _(t.label), _("seconds per epoch"): round(t.seconds_per_epoch, 3),
                                    _("perplexity after 4 epochs"): round(t.perplexity, 2)} for t in timings]),
                     hide_index=True)
        st.caption(sentences(cell_timing.comparison(timings),
                             _("Seconds per epoch include a validation pass and a sample."),
                             cell_timing.perplexities(timings)))


def three_things() -> None:
    st.subheader(_("Three things to remember"))
    st.markdown(_(
        "1. A recurrent network keeps a **state** of fixed size and updates it with the same weights at every "
        "step, so it can read any length of past without growing.\n"
        "2. It is trained with the truth fed in (**teacher forcing**) but generates from its own guesses, so "
        "its errors compound over the horizon, exactly like Act 1's forecasts.\n"
        "3. Its gradient with respect to a state k steps back is a product of k factors (W_hh and the tanh slopes, "
        "once per step), and a weight's gradient sums such products over every step: the far terms **vanish or "
        "explode** unless the recurrent weights stay near the edge, which is why clipping, truncation and gates "
        "exist."))


def after_the_acts() -> None:
    """Everything after the acts."""
    claims()
    bptt_in_detail()
    concise_version(texts.time_machine_or_none())
    three_things()
    st.subheader(_("All the labs"))
    for lab in LABS:
        col_link, col_text = st.columns([1, 3])
        with col_link:
            lab_link(lab, _(lab.title))
        col_text.markdown(_(lab.blurb))


