"""The chapter, the app's home: its settings and the acts' own figures and readings (Act 1 is the Forecasting lab's
module at the act's window, Act 5's figure the Gradient flow lab's). Data in, figures and sentences out, no
Streamlit: pages/chapter.py draws them, and each act's notebook runs them."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from core.i18n import N_, _, ngettext, sentences
from core.claims import Claim
from core.figures import Chart, hline, style
from core.labs import gradient_flow
from core.lesson import passage, readings as lesson_readings
from core.sequences import forecast, readings
from core.nn import gradflow, gradflow_readings, param_counts
from core.runs.record import HistoryRow
from core.settings import setting

KEY = "chapter"
TITLE = N_("The chapter")   # the menu shows it translated (core.i18n)
ICON = ":material/menu_book:"
BLURB = ""
ACTS = (1, 2, 3, 4, 5)
SECTIONS = {1: "9.1 Working with Sequences", 2: "9.2 Converting Raw Text into Sequence Data and 9.3 Language Models",
            3: "9.4 Recurrent Neural Networks", 4: "9.5 Recurrent Neural Network Implementation from Scratch and 9.7 "
            "Backpropagation Through Time", 5: "9.6 Concise Implementation and 9.7 Backpropagation Through Time"}
V = 28   # the chapter's characters: 26 letters, the space and <unk>


@dataclass(frozen=True)
class Settings:
    act: int = setting(1, N_("Act"), widget="radio", choices=ACTS)
    tau: int = setting(4, N_("Window τ: how many past values the model sees"), lo=1, hi=32)
    h: int = setting(32, N_("Hidden units h"), lo=4, hi=512, step=4)
    seed: int = setting(0, N_("Seed"), N_("Another seed: other starting weights and another order of the windows."),
                        lo=0, hi=10_000, widget="input")
    scale: float = setting(1.0, N_("Weight scale (× a random W_hh)"), widget="select_slider",
                           choices=gradient_flow.SCALES)


# --- Act 3: memory without a window ------------------------------------------------------------------------

def act1_reading(s, a: forecast.Analysis) -> str:
    """What Act 1's figures show, in claims built from their numbers (core.sequences.readings; they change with τ)."""
    nxt = ngettext("**Next:** text is a sequence too, and there the past that matters is much longer than the one "
                   "step this model looks at.", "**Next:** text is a sequence too, and there the past that matters is "
                   "much longer than the {n} steps this model looks at.", s.tau).format(n=s.tau)
    return sentences(readings.one_step(a, s.sigma), readings.k_vs_one(a, s.k), readings.far_horizon(a),
                     readings.rest(a, s.n_train, s.T), nxt)


def window_figure(V: int, h: int, max_window: int = 20) -> go.Figure:
    """Parameters against the context length: a fixed-window network grows, an RNN stays flat."""
    n = np.arange(1, max_window + 1)
    rnn = sum(param_counts.rnn_parameter_terms(V, 0, h).values())
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=n, y=[param_counts.window_model_parameters(V, int(k), h) for k in n],
                             mode="lines+markers", name=_("fixed-window network (the last n tokens side by side)")))
    fig.add_trace(go.Scatter(x=n, y=[rnn] * len(n), name=_("RNN (one token at a time, any context)"),
                             mode="lines", line=dict(width=3)))
    style(fig, _("Parameters against context length"), _("tokens of context n"), _("parameters"), height=360,
          legend_below=True)
    fig.update_yaxes(rangemode="tozero", exponentformat="none", separatethousands=True)   # 10,000, not 1x10^4
    fig.update_layout(xaxis=dict(dtick=2))
    return fig


def window_counts(h: int, vocab: int = V) -> dict:
    """The RNN's parameters (any context) and a fixed-window network's for 5 and 20 tokens of context."""
    return dict(rnn=sum(param_counts.rnn_parameter_terms(vocab, 0, h).values()),
                window_5=param_counts.window_model_parameters(vocab, 5, h),
                window_20=param_counts.window_model_parameters(vocab, 20, h))


def window_chart(h: int, vocab: int = V) -> Chart:
    c = window_counts(h, vocab)
    return Chart("act3.window", window_figure(vocab, h),
                 _("With |V| = {V} characters and h = {h}: a network that reads the last 5 characters side by side has "
                   "{window_5:,} parameters and one that reads 20 has {window_20:,}; the RNN has {rnn:,} whatever the "
                   "context, and carries the past in a state of {h} numbers.").format(V=vocab, h=h, **c))


# --- Act 4: training on the passage -------------------------------------------------------------------------

def passage_figure(history: list[HistoryRow], vocab_size: int, title: str) -> go.Figure:
    """The passage run's perplexity per epoch, on the passage and on the text after it, against a uniform guess."""
    fig = go.Figure()
    epochs = [r.epoch for r in history]
    if history:
        fig.add_trace(go.Scatter(x=epochs, y=[r.train_ppl for r in history], name=_("the passage (training)"),
                                 mode="lines+markers", marker=dict(size=4), line=dict(width=3)))
        fig.add_trace(go.Scatter(x=epochs, y=[r.val_ppl for r in history], name=_("the text after it (held out)"),
                                 mode="lines", line=dict(dash="dash")))
    hline(fig, vocab_size, _("a uniform guess: {V}").format(V=vocab_size), dash="dot", color="gray", log_y=True,
          above=True)
    style(fig, title, _("epoch"), _("perplexity"), height=360, log_y=True, legend_below=True)
    fig.update_yaxes(range=[-0.02, math.log10(200)])
    return fig


def passage_readings(history: list[HistoryRow], vocab_size: int, seconds: float | None,
                     where: str = N_("here")) -> list[Claim]:
    return lesson_readings.passage_run(history, vocab_size, seconds, where)


def passage_chart(history: list[HistoryRow], vocab_size: int, seconds: float | None, title: str,
                  where: str = N_("here")) -> Chart:
    said = passage_readings(history, vocab_size, seconds, where)
    return Chart("act4.passage", passage_figure(history, vocab_size, title),
                 sentences(_("{title}.").format(title=title), *said))


def reaches(models: dict, text: str) -> dict[int, passage.GradientReach]:
    """The gradient of the loss of the first window's last prediction at each earlier state, per stored epoch."""
    window = passage.passage(text)[: passage.config().num_steps + 1]
    return {epoch: passage.gradient_reach(models[epoch], window) for epoch in sorted(models)}


def reach_figure(reach: dict[int, passage.GradientReach]) -> go.Figure:
    """||dL/dH|| at each state back from a window's last prediction, one line per stored epoch."""
    fig = go.Figure()
    for epoch, r in reach.items():
        fig.add_trace(go.Scatter(x=np.arange(len(r.norms)), y=r.norms, mode="lines+markers", marker=dict(size=4),
                                 name=_("after {epoch} epochs").format(epoch=epoch)))
    return style(fig, _("How far back the last character's loss reaches"), _("steps back from the last character"),
                 _("gradient norm at that state"), height=340, log_y=True)


def reach_chart(reach: dict[int, passage.GradientReach]) -> Chart:
    parts = [_("after {epoch} epochs it starts at {first:.3g} and is {last:.3g} at {back} steps back, {rate:.2f} per "
               "step").format(epoch=epoch, first=r.norms[0], last=r.norms[-1], back=len(r.norms) - 1, rate=r.rate)
             for epoch, r in reach.items()]
    return Chart("act4.reach", reach_figure(reach), _("The gradient of the loss of predicting the window's last "
                                                      "character, at each earlier state: {parts}.").format(
        parts=_("; ").join(parts)))


def reach_reading(reach: dict[int, passage.GradientReach]) -> Claim:
    last = max(reach)
    return gradflow_readings.reach(reach[last].norms, last)


# --- Act 5 (after the acts): backpropagation through time in detail ---------------------------------------

def bptt(scale: float) -> gradflow.Analysis:
    """The figure's gradient: 32 units, 24 steps back, the page's weight scale."""
    return gradflow.analyse(n=32, scale=scale, T=24)


def bptt_chart(a: gradflow.Analysis) -> Chart:
    """The Gradient flow lab's figure of the gradient's norm, with the linear term against the one through tanh."""
    return Chart("after.norms", gradient_flow.norms_figure(a), gradflow_readings.through_tanh(a).text)
