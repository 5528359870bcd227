"""Lab 3, RNN cell: the recurrence stepped through time, its memory against an n-gram table's, one-hot against an
embedding, and the proof that its gradients are right.

The whole lab in one place (see core.labs): settings, computation, metrics, figures, readings and texts. The page
caches the step's figures, the unrolled picture and the memory chart on their own (a class moves t together), so
the parts are separate functions, which compute() puts together for the notebook."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from core.i18n import N_, _, ngettext, sentences
from core.claims import Claim
from core.figures import Chart, Metric, chart_text, style
from core.nn import cell_demo, param_counts, rnn_ref, verify
from core.settings import setting

KEY = "rnn_cell"
TITLE = N_("RNN cell")   # the menu shows it translated (core.i18n)
ICON = ":material/memory:"
BLURB = N_("Step the recurrence through time, see the same weights reused, and check the gradients yourself.")
SECTION = "9.4 Recurrent Neural Networks and 9.5 Recurrent Neural Network Implementation from Scratch"
INPUT_CASES = ((28, 256, 64), (10_000, 256, 256), (10_000, 256, 64))   # (|V|, h, d) beside the word's own


@dataclass(frozen=True)
class Settings:
    word: str = setting("machine", N_("Word to read (the network predicts each next letter)"),
                        hi=cell_demo.MAX_WORD)
    h: int = setting(4, N_("Hidden units"), lo=1, hi=8)
    seed: int = setting(0, N_("Weight seed"), lo=0, hi=10_000, widget="input")
    t: int = setting(1, N_("Time step t"), N_("Which step of reading the word the figures show."), lo=1,
                     hi=cell_demo.MAX_WORD)
    letter: str = setting("", N_("Letter fed in"), N_("One of the letters the word feeds in: its one-hot row times W_xh "
                                                      "against the row looked up."), widget="select")   # the word's
    V: int = setting(28, N_("Vocabulary |V|"), lo=2, hi=100_000, widget="input")
    h2: int = setting(256, N_("Hidden units h"), lo=1, hi=10_000, widget="input")


@dataclass(frozen=True)
class Result:
    settings: Settings
    run: cell_demo.WordRun
    step: cell_demo.Step
    lookup: cell_demo.Lookup


def read(s: Settings) -> cell_demo.WordRun:
    return cell_demo.read_word(s.word, s.h, s.seed)


def first_steps(run: cell_demo.WordRun) -> dict[str, int]:
    """Each letter the word feeds in (every letter but its last), with the first step that reads it."""
    steps: dict[str, int] = {}
    for t, token in enumerate(run.x_ids[0], start=1):
        steps.setdefault(run.vocab.token_text(int(token)), t)
    return steps


def lookup(run: cell_demo.WordRun, letter: str) -> cell_demo.Lookup:
    """The one-hot product against the row looked up, for a letter the word feeds in ('' : its first letter)."""
    steps = first_steps(run)
    if letter and letter not in steps:
        raise ValueError(_("The word feeds in only the letters {letters}: pick one of them.").format(
            letters=", ".join(map(repr, steps))))
    return cell_demo.one_hot_lookup(run, steps[letter or next(iter(steps))])


def compute(s: Settings) -> Result:
    run = read(s)
    return Result(s, run, run.step(min(s.t, run.steps)), lookup(run, s.letter))


def metrics(r: Result) -> list[Metric]:
    step = r.step
    return [Metric(_("P(next letter '{letter}')").format(letter=step.target), f"{step.P[step.target_id]:.3f}"),
            Metric(_("Loss at this step"), f"{step.loss:.3f}",
                   _("-log P; the mean over all {n} steps is {mean:.3f}").format(n=r.run.steps, mean=r.run.cache.loss))]


def step_words(run: cell_demo.WordRun, step: cell_demo.Step) -> str:
    return _("Step t = {t}: the network reads '{read}' and should predict '{target}'. It gives that letter probability "
             "{p:.3f}, a loss of {loss:.3f} (mean over all {n} steps: {mean:.3f}). The weights are random: nothing is "
             "learnt yet.").format(t=step.t, read=step.read, target=step.target, p=step.P[step.target_id],
                                   loss=step.loss, n=run.steps, mean=run.cache.loss)


def letter_labels(run: cell_demo.WordRun) -> list[str]:
    labels = [chart_text(repr(c)[1:-1]) if c != " " else "␣" for c in run.vocab.idx_to_token]
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
    fig = go.Figure(go.Bar(x=chars, y=step.P, name=_("next-letter probability"),
                           marker_color=["#D55E00" if t else "#0072B2" for t in target],
                           marker_pattern_shape=["/" if t else "" for t in target],
                           text=[_("next") if t else "" for t in target], textposition="outside"))
    style(fig, _("softmax(Oₜ): the next letter"), _("letter"), _("probability"), height=300)
    fig.update_layout(margin=dict(t=40, b=40, l=40, r=10))
    return fig


def step_charts(run: cell_demo.WordRun, step: cell_demo.Step) -> list[Chart]:
    """The six views of one step, each a small figure with its own summary: input, previous and new state,
    the two weight matrices and the next-letter probabilities. Drawn three to a row, they stack on a phone."""
    chars, units = letter_labels(run), [f"h{i + 1}" for i in range(step.H.shape[1])]
    rng = lambda z: _("values {lo:.2f} to {hi:.2f}").format(lo=np.min(z), hi=np.max(z))  # noqa: E731
    best = int(np.argmax(step.P))
    W_xh, W_hh = run.params["W_xh"], run.params["W_hh"]
    letter, unit = _("letter"), _("unit")
    return [
        Chart("step-x", heat_figure(step.X, _("Xₜ: one-hot input"), chars, ["x"], letter, ""),
              _("The input at step {t}: a 1 for '{read}' (id {id}), 0 elsewhere.").format(
                  t=step.t, read=step.read, id=int(np.argmax(step.X)))),
        Chart("step-h-prev", heat_figure(step.H_prev, _("Hₜ₋₁: previous state"), units, ["h"], unit, ""),
              _("The previous state at step {t}: {values}.").format(t=step.t, values=rng(step.H_prev))),
        Chart("step-h", heat_figure(step.H, _("Hₜ: new state"), units, ["h"], unit, ""),
              _("The new state at step {t}: {values}.").format(t=step.t, values=rng(step.H))),
        Chart("step-w-xh", heat_figure(W_xh, _("W_xh (a row per letter)"), units, chars, unit, letter),
              _("The input weights W_xh, {rows} letters by {cols} units (the one-hot input picks one row): "
                "{values}.").format(rows=W_xh.shape[0], cols=W_xh.shape[1], values=rng(W_xh))),
        Chart("step-w-hh", heat_figure(W_hh, "W_hh", units, units, unit, unit),
              _("The recurrent weights W_hh, {rows} by {cols} (from each unit of the previous state to each unit of "
                "the new one): {values}.").format(rows=W_hh.shape[0], cols=W_hh.shape[1], values=rng(W_hh))),
        Chart("step-p", probability_figure(run, step),
              _("Next-letter probabilities: the true next letter '{target}' (the bar marked “next”) gets {p:.3f}; "
                "the likeliest is '{best}' with {best_p:.3f}.").format(target=step.target, p=step.P[step.target_id],
                                                                     best=chars[best], best_p=step.P[best])),
    ]


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
    for y, name, first in ((0, _("inputs"), "x"), (1, _("states"), "H"), (2, _("outputs"), "O")):   # the data behind the boxes
        fig.add_trace(go.Scatter(x=list(range(steps)), y=[y] * steps, mode="markers", marker=dict(opacity=0),
                                 text=[f"{first}{s + 1}" for s in range(steps)], name=name, showlegend=False,
                                 hoverinfo="skip"))
    style(fig, _("Unrolled: the same weights at every step"), None, None, height=300)
    fig.update_layout(xaxis=dict(visible=False, range=[-0.6, steps - 0.25]),   # room for the last W_hq
                      yaxis=dict(visible=False, range=[-0.6, 2.6]), margin=dict(t=50, b=10))
    return fig


def unrolled_step(word: str, s: int, now: bool) -> tuple[list[dict], list[dict]]:
    """Step s's column of the unrolled figure: its three boxes, and their labels with the arrows into and out of
    them (W_xh and W_hq upward, W_hh from the step before)."""
    boxes, notes = [], []
    for y, label, colour in ((0, f"x{s + 1}<br>'{chart_text(word[s])}'", "#a0c4ff"), (1, f"H{s + 1}", "#ffd6a5"),
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


def unrolled_chart(word: str, steps: int, current: int) -> Chart:
    return Chart("unrolled", unrolled_figure(word, steps, current),
                 _("The network reading “{word}”, unrolled over {n} steps: inputs x1..x{n} at the bottom, states "
                   "H1..H{n} in the middle, outputs O1..O{n} on top. Every step uses the same W_xh, W_hh and W_hq; "
                   "step {t} is marked.").format(word=word[:steps + 1], n=steps, t=current))


def memory_figure(V: int, h: int) -> go.Figure:
    """Parameters of an RNN (flat in the context length) against entries of an n-gram table (|V|^(k+1))."""
    ctx = np.arange(1, 21)
    rnn_params = sum(param_counts.rnn_parameter_terms(V, 0, h).values())  # one-hot inputs: no embedding
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=ctx, y=[rnn_params] * len(ctx), name=_("RNN parameters (any context)")))
    fig.add_trace(go.Scatter(x=ctx, y=[float(param_counts.ngram_table_size(V, int(k))) for k in ctx],
                             name=_("n-gram table entries |V|^(k+1)")))
    return style(fig, None, _("context length k"), _("count"), height=330, log_y=True)


def memory_chart(V: int, h: int) -> Chart:
    rnn = sum(param_counts.rnn_parameter_terms(V, 0, h).values())
    text = _("With |V| = {V:,} and h = {h:,}, the RNN has {rnn:,} parameters for any context length; an n-gram table "
             "with 20 tokens of context needs |V|^21 = 10^{power:.1f} entries.")
    return Chart("memory", memory_figure(V, h), text.format(V=V, h=h, rnn=rnn, power=21 * math.log10(V)))


def charts(r: Result) -> list[Chart]:
    s, run = r.settings, r.run
    return step_charts(run, r.step) + [unrolled_chart(run.word, run.steps, r.step.t), memory_chart(s.V, s.h2)]


def input_cases(run: cell_demo.WordRun) -> list[tuple[int, int, int]]:
    """(|V|, h, d) for the one-hot against embedding table: the word's own network (d = 2), then INPUT_CASES."""
    return [(len(run.vocab), run.params["W_hh"].shape[0], 2), *INPUT_CASES]


def input_table(cases: list[tuple[int, int, int]]) -> list[dict]:
    """The one-hot and embedding input weights of each case, as table rows."""
    one_hot, embedding = _("one-hot: W_xh (|V| × h)"), _("embedding: E (|V| × d) + W_xh (d × h)")
    return [{"|V|": V, "h": h, one_hot: param_counts.input_parameters(V, h, 0), "d": d,
             embedding: param_counts.input_parameters(V, h, d)} for V, h, d in cases]


def inputs_claim(cases: list[tuple[int, int, int]]) -> Claim:
    """Which input is cheaper, one-hot or an embedding, in each case, and the rule that decides it."""
    return param_counts.input_choice(cases)


def readings(r: Result) -> list[Claim]:
    return [inputs_claim(input_cases(r.run))]


def numbers(r: Result) -> dict:
    step = r.step
    return dict(p_next=float(step.P[step.target_id]), loss=step.loss, mean_loss=float(r.run.cache.loss))


NB_HYPHEN = "\u2011"   # a hyphen a line never breaks at: "1e-6" stays on one line on a phone


def difference_text(x: float) -> str:
    """A largest difference: 4.4e-16 (rounding), or "0, exactly" (not 0.0e+00)."""
    return f"{x:.1e}" if x else _("0, exactly")


def tol(x: float) -> str:
    """A tolerance as the table shows it (1e-6, 1e-12), for a sentence: its minus sign never starts a new line."""
    return f"{x:.0e}".replace("e-0", "e-").replace("-", NB_HYPHEN)


def tolerance_words() -> str:
    """The tolerances of core.nn.verify, in words (built from its constants)."""
    at = dict(abs=tol(verify.TOL_ABS), rel=tol(verify.TOL_REL), identity=tol(verify.TOL_IDENTITY))
    text = (_("{abs} (absolute or relative) where the two ways round differently, {identity} where one float64 result "
              "is checked against an identity of the maths, and 0 where two ways of computing must agree to the last "
              "bit") if verify.TOL_ABS == verify.TOL_REL else
            _("{abs} absolute or {rel} relative where the two ways round differently, {identity} where one float64 "
              "result is checked against an identity of the maths, and 0 where two ways of computing must agree to "
              "the last bit"))
    return text.format(**at)


def largest_error_words(rows: list[tuple]) -> str:
    """The worst error among the checks that allow one, beside its tolerance; and how many allow none."""
    allowed = [(row[1], row[2]) for row in rows if row[2] > 0]
    exact = len(rows) - len(allowed)
    worst = max(allowed, default=None, key=lambda r: r[0] / r[1])
    said = ngettext("{n} check must agree to the last bit (tolerance 0).",
                    "{n} checks must agree to the last bit (tolerance 0).", exact).format(n=exact)
    if worst is None:
        return said
    error = f"{worst[0]:.1e}".replace("-", NB_HYPHEN)
    return sentences(_("Largest error against its tolerance: {error} (tolerance {tol}).").format(
        error=error, tol=tol(worst[1])), said)


def gradient_check(run: cell_demo.WordRun, name: str, index: tuple) -> tuple[float, float, float]:
    """One gradient entry by the hand-written BPTT and by finite differences, and their relative error."""
    grads = rnn_ref.loss_and_grads(run.params, run.x_ids, run.y_ids)[1]
    analytic = float(grads[name][index])
    numeric = rnn_ref.finite_difference(run.params, run.x_ids, run.y_ids, name, index)
    return analytic, numeric, verify.rel_err(analytic, numeric)


INTRO = N_("A recurrent network reads a sequence one token at a time and keeps a **hidden state** H, a small vector "
           "that summarises everything read so far. Each step mixes the new input with the old state through the same "
           "two weight matrices, squashes the result with tanh, and reads a prediction for the next token off the new "
           "state.")
FORMULA = (r"\begin{gathered}H_t = \tanh(X_t W_{xh} + H_{t-1} W_{hh} + b_h) \\ O_t = H_t W_{hq} + b_q"
           r"\qquad \ell_t = -\log \operatorname{softmax}(O_t)_{y_t}\end{gathered}")
NOTATION = ""


def notes(r: Result) -> str:
    """The step in words, and which input is cheaper, one-hot or an embedding."""
    return f"{step_words(r.run, r.step)}\n\n{inputs_claim(input_cases(r.run))}"   # each in the language in force


SOURCE = (rnn_ref.cell, rnn_ref.forward, rnn_ref.backward)
