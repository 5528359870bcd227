"""Lab 6, Memory and gates: a plain RNN forgets a symbol across a delay; a GRU and an LSTM carry it, and why.

The whole lab in one place: its settings (one comparison's: the delay, sizes, schedule, gate biases and seed), the
computation from a trained comparison to a result, its metrics, figures and readings (claims built from the numbers
they state), the book sections it follows and the code it shows. Training is a run of the job manager's (its page
trains in the server's workers, core.runs.tasks); the defaults' comparison ships in assets/ (python -m core gates),
so the page and the notebook open with it at once. Its page is pages/gates.py; its notebook `python -m core notebook
gates` (at other settings than the defaults it trains, seconds to a minute on a CPU)."""
from __future__ import annotations

import tempfile
from dataclasses import asdict, dataclass

import numpy as np
import plotly.graph_objects as go

from core.i18n import N_, _, listing, sentences
from core.claims import Claim
from core.figures import PALETTE, Chart, Metric, hline, style
from core.nn import memory, memory_readings as mr, memory_store
from core.nn.memory_store import CELL_KINDS, Comparison, Saved
from core.settings import setting

KEY = "gates"
TITLE = N_("Memory and gates")   # the menu shows it translated (core.i18n)
ICON = ":material/memory:"
BLURB = N_("Train a plain RNN, a GRU and an LSTM to recall a symbol across a delay: the RNN forgets, the gates "
           "remember.")
SECTION = "10.1 Long Short-Term Memory (LSTM) and 10.2 Gated Recurrent Units (GRU)"
TRAINS = True    # a comparison is trained: the claims sweep checks its readings on any numbers and on real runs
NAMES = {"rnn": N_("Plain RNN"), "gru": "GRU", "lstm": "LSTM"}   # shown through _()
COLOURS = dict(zip(CELL_KINDS, PALETTE))
GATE_WORDS = {"reset": N_("reset"), "update": N_("update"), "input": N_("input"), "forget": N_("forget"),
              "output": N_("output")}   # each gate's name as the gates figure labels it


@dataclass(frozen=True)
class Settings:
    delay: int = setting(Comparison.delay, N_("Delay D"), N_("Distracting tokens between the symbol and the question."),
                         lo=1, hi=100)
    hidden: int = setting(Comparison.hidden, N_("Hidden size"), N_("Units in each cell's state, the same for all three."),
                          lo=4, hi=64)
    steps: int = setting(Comparison.steps, N_("Training steps"), N_("Adam steps of 64 sequences each, for each cell."),
                         lo=50, hi=1000, step=50)
    lstm_bias: float = setting(Comparison.lstm_bias, N_("LSTM forget-gate bias"),
                               N_("Where the forget gate starts: σ(3) = 0.95 keeps 95% of the memory cell each step; "
                                  "σ(-3) = 0.05 keeps 5%."), lo=-3.0, hi=5.0, step=0.5, url="forget")
    gru_bias: float = setting(Comparison.gru_bias, N_("GRU update-gate bias"),
                              N_("Where the update gate starts: σ(3) = 0.95 keeps 95% of the state each step."),
                              lo=-3.0, hi=5.0, step=0.5, url="update")
    seed: int = setting(Comparison.seed, N_("Seed"), lo=0, hi=10_000, widget="input")


def comparison(s: Settings) -> Comparison:
    """The comparison these settings train (the same names)."""
    return Comparison(**asdict(s))


@dataclass(frozen=True)
class Result:
    settings: Settings
    saved: Saved                 # the comparison shown: the shipped one, or one trained at these settings
    sweep: dict                  # the shipped delay sweep: cell -> {delay: [final accuracy by seed]}
    gradients: dict              # cell -> each step's ||dL/dx_t||, trained
    untrained: dict              # cell -> the same, for the cell as it starts (same seed and gate bias)
    gates: dict                  # cell -> {gate: mean over held-out sequences and steps}, trained
    untrained_gates: dict
    rho: float                   # the trained plain RNN's spectral radius of W_hh (NaN without one)

    @property
    def delay(self) -> int:
        return self.saved.comparison.delay

    @property
    def shows_settings(self) -> bool:
        """Whether the networks shown were trained at these settings (else: the stored ones, until trained)."""
        return self.saved.comparison == comparison(self.settings)


def shipped() -> Saved:
    """The defaults' comparison and the delay sweep, from assets/ (ValueError says how to rebuild them)."""
    return memory_store.load()


def analyse(s: Settings, saved: Saved, sweep: dict) -> Result:
    """What the page shows of a trained comparison: gradients and gates of each cell, trained and as it starts."""
    delay, plans = saved.comparison.delay, saved.comparison.plans()
    fresh = {kind: memory.build(plans[kind]) for kind in saved.cells}
    grads = {k: memory.input_gradients(c.net, delay) for k, c in saved.cells.items()}
    untrained = {k: memory.input_gradients(net, delay) for k, net in fresh.items()}
    rnn = saved.cells.get("rnn")
    rho = float(np.max(np.abs(np.linalg.eigvals(rnn.net.cell.weight_hh.detach().double().numpy())))) if rnn \
        else float("nan")
    return Result(s, saved, sweep, grads, untrained, {k: memory.gate_means(c.net, delay) for k, c in
                                                      saved.cells.items()},
                  {k: memory.gate_means(net, delay) for k, net in fresh.items()}, rho)


def compute(s: Settings) -> Result:
    """The result at these settings: the shipped comparison when it was trained at them, else one trained here."""
    stored = shipped()
    if stored.comparison == comparison(s):
        return analyse(s, stored, stored.delays)
    with tempfile.TemporaryDirectory() as folder:
        return analyse(s, memory_store.train_comparison(comparison(s), folder), stored.delays)


def metrics(r: Result) -> list[Metric]:
    said = _("right on 1,000 held-out sequences after {steps} steps at delay {delay}; {parameters:,} parameters")
    out = [Metric(_(NAMES[k]), f"{100 * c.final:.1f}%", said.format(steps=c.steps[-1], delay=r.delay,
                                                                    parameters=c.parameters))
           for k, c in r.saved.cells.items()]
    return out + [Metric(_("Chance"), f"{100 * memory.CHANCE:.0f}%",
                         _("guessing one of {n} symbols").format(n=memory.SYMBOLS))]


def described(c: Comparison) -> str:
    """A comparison's settings in words, as the page names the stored one."""
    return _("delay {delay}, hidden size {hidden}, {steps} steps, forget-gate bias {forget:g}, update-gate bias "
             "{update:g}, seed {seed}").format(delay=c.delay, hidden=c.hidden, steps=c.steps, forget=c.lstm_bias,
                                               update=c.gru_bias, seed=c.seed)


def settings_of(c: Comparison) -> Settings:
    """The lab's settings a comparison was trained at (the same names)."""
    return Settings(**c.to_dict())


def sizes(r: Result) -> str:
    """The three networks' sizes side by side (counted, not a claim): the same hidden size, different parameters."""
    counts = listing(f"{_(NAMES[k])} {c.parameters:,}" for k, c in r.saved.cells.items())
    return _("Parameters, embedding and readout included: {counts}; each with {hidden} hidden units (a GRU has three "
             "sets of weights where the plain RNN has one, an LSTM four).").format(counts=counts,
                                                                                    hidden=r.saved.comparison.hidden)


def accuracy_figure(curves: dict, delay: int) -> go.Figure:
    """Each cell's held-out accuracy against training steps (curves: cell -> (steps, accuracy)), with chance."""
    fig = go.Figure()
    for k, (steps, acc) in curves.items():
        fig.add_trace(go.Scatter(x=steps, y=acc, name=_(NAMES[k]), mode="lines+markers",
                                 line=dict(color=COLOURS[k])))
    hline(fig, memory.CHANCE, _("chance"), color="gray")
    style(fig, _("Held-out accuracy while training (delay {delay})").format(delay=delay), _("training step"),
          _("share right"), height=360)
    fig.update_yaxes(range=[0, 1.05])
    return fig


def progress_chart(p: memory_store.Progress, delay: int) -> Chart:
    """A live comparison's curves so far, while it trains (the page's progress panel)."""
    curves = {k: ([step for step, share in v], [share for step, share in v]) for k, v in p.curves.items()}
    said = _("; ").join(_("{cell} {share:.0f}% after {steps} steps").format(cell=_(NAMES[k]), share=100 * a[-1],
                                                                             steps=s[-1]) for k, (s, a) in curves.items())
    return Chart("progress", accuracy_figure(curves, delay),
                 _("Training the {cell}, step {step} of {total} in all. So far: {said}.").format(
                     cell=_(NAMES[p.cell]), step=p.step, total=p.total_steps, said=said or _("none")))


def delays_figure(r: Result) -> go.Figure:
    """The stored sweep: each cell's final accuracy trained at each delay (mean of its seeds, their range as bars),
    and the shown comparison's own results at its delay."""
    fig = go.Figure()
    for k, by_delay in r.sweep.items():
        d = sorted(by_delay)
        mean = [float(np.mean(by_delay[x])) for x in d]
        fig.add_trace(go.Scatter(x=d, y=mean, name=_(NAMES[k]), mode="lines+markers", line=dict(color=COLOURS[k]),
                                 error_y=dict(type="data", symmetric=False,
                                              array=[max(by_delay[x]) - m for x, m in zip(d, mean)],
                                              arrayminus=[m - min(by_delay[x]) for x, m in zip(d, mean)])))
    for k, c in r.saved.cells.items():
        fig.add_trace(go.Scatter(x=[r.delay], y=[c.final], name=_("{cell}, shown run").format(cell=_(NAMES[k])),
                                 mode="markers",
                                 marker=dict(symbol="star", size=13, color=COLOURS[k]), showlegend=False))
    hline(fig, memory.CHANCE, _("chance"), color="gray")
    style(fig, _("Final accuracy by delay (stored sweep; ★ this run)"), _("delay D"), _("share right"),
          height=360)
    fig.update_yaxes(range=[0, 1.05])
    return fig


def gradients_figure(r: Result) -> go.Figure:
    """||dL/dx_t|| against the step t as a share of the last input's, trained (solid) and as each cell starts
    (dotted), and the RNN's ρ^k guide through its last point: the share at t = 0 is what reaches the symbol."""
    fig = go.Figure()
    t = np.arange(r.delay + 2)
    for k in r.gradients:
        for curve, how, dash in ((r.gradients[k], _("{cell}, trained"), None),
                                 (r.untrained[k], _("{cell}, untrained"), "dot")):
            fig.add_trace(go.Scatter(x=t, y=curve / curve[-1], name=how.format(cell=_(NAMES[k])),
                                     line=dict(color=COLOURS[k], dash=dash)))
    if "rnn" in r.gradients and np.isfinite(r.rho):
        fig.add_trace(go.Scatter(x=t, y=r.rho ** (t[-1] - t),
                                 name=_("ρᵏ, ρ = {rho:.2f} (RNN's W_hh)").format(rho=r.rho),
                                 line=dict(color="gray", dash="dash")))
    style(fig, _("How much the answer depends on each input"), _("step t (0: the symbol; last: the question)"),
          _("‖∂L/∂xₜ‖ ÷ the last input's"), height=400, log_y=True)
    return fig


def gates_figure(r: Result) -> go.Figure:
    """Each gate's mean value, untrained and trained, as bars across (their names stay readable on a phone)."""
    names = [(k, g) for k in r.gates for g in r.gates[k]]
    labels = [_("{cell} {gate}").format(cell=_(NAMES[k]), gate=_(GATE_WORDS.get(g, g))) for k, g in names]
    fig = go.Figure([go.Bar(y=labels, x=[r.untrained_gates[k][g] for k, g in names], name=_("untrained"),
                            orientation="h", marker_color="#999999"),
                     go.Bar(y=labels, x=[r.gates[k][g] for k, g in names], name=_("trained"), orientation="h",
                            marker_color=PALETTE[2])])
    style(fig, _("Each gate's mean value over the sequence"), _("mean gate value"), None, height=380)
    fig.update_layout(barmode="group")
    fig.update_xaxes(range=[0, 1])
    fig.update_yaxes(autorange="reversed")
    return fig


def charts(r: Result) -> list[Chart]:
    curves = {k: (c.steps, c.accuracy) for k, c in r.saved.cells.items()}
    out = [Chart("accuracy", accuracy_figure(curves, r.delay), sentences(*recalls(r))),
           Chart("delays", delays_figure(r), sentences(*over_delays(r)))]
    if r.gradients:
        out.append(Chart("gradients", gradients_figure(r), sentences(*first_inputs(r)) or
                         _("Each cell's gradient of the loss with respect to each step's input.")))
    if r.gates:
        said = forget(r)
        out.append(Chart("gates", gates_figure(r), said.text if said else _("The gates' mean values.")))
    return out


def recalls(r: Result) -> list[Claim]:
    return [mr.recall(k, c.final, r.delay) for k, c in r.saved.cells.items()]


def over_delays(r: Result) -> list[Claim]:
    answers = 1000 * len(next(iter(next(iter(r.sweep.values())).values()))) if r.sweep else 1000
    return [mr.over_delays(k, {d: float(np.mean(a)) for d, a in v.items()}, answers) for k, v in r.sweep.items()]


def first_inputs(r: Result) -> list[Claim]:
    if "rnn" not in r.gradients:
        return []
    return [mr.first_input(k, list(r.gradients[k]), list(r.gradients["rnn"])) for k in ("gru", "lstm")
            if k in r.gradients]


def forget(r: Result) -> Claim | None:
    return mr.forget_gate(r.gates["lstm"]["forget"], r.delay) if "lstm" in r.gates else None


def readings(r: Result) -> list[Claim]:
    """Every sentence of the lab that states a number, a comparison or a regime, in the page's order."""
    return [*recalls(r), *over_delays(r), *first_inputs(r), *([forget(r)] if forget(r) else [])]


def numbers(r: Result) -> dict:
    """What the notebook prints for the tests to compare with the page's."""
    return dict(delay=r.delay, rho=r.rho, **{f"{k}_accuracy": c.final for k, c in r.saved.cells.items()},
                **{f"{k}_first_input": float(g[0]) for k, g in r.gradients.items()})


INTRO = N_(
    "A network reads one symbol out of four, then D distracting tokens, then a question: *which symbol came first?* "
    "Guessing gets 25% right. To answer, the network must carry the symbol across the whole delay. A plain RNN "
    "multiplies its state by the same W_hh and squashes it through tanh at every step, so what it read D steps ago "
    "fades like ρᵏ (the Gradient flow lab). An **LSTM** keeps a memory cell that each step scales by a *forget gate* "
    "and adds to; a **GRU** mixes its old state with a new one through an *update gate*. A gate near 1 passes the "
    "memory, and its gradient, through unchanged. Here the three cells learn the same task side by side.")
FORMULA = (r"\begin{gathered}\text{LSTM: } c_t = f_t \odot c_{t-1} + i_t \odot \tilde c_t,\quad h_t = o_t \odot "
           r"\tanh(c_t) \\ \text{GRU: } h_t = z_t \odot h_{t-1} + (1 - z_t) \odot \tilde h_t\end{gathered}")
NOTATION = N_("Each cell reads an 8-number embedding of each token and answers from its last state through one linear "
              "layer. The gates are sigmoids between 0 and 1; a gate's bias sets where it starts before training.")
NOTES = N_("""
**What to try.** Shorten the delay to 10 and train: does the plain RNN learn it then? Lengthen it to 60: which
gated cell holds at this schedule? (The second chart's stored sweep has both answers; your run adds its star.) Set
the LSTM's forget-gate bias to -3: its memory cell then starts by keeping σ(-3) ≈ 5% of itself each step, and
training has to find the memory on its own.

**The question it answers.** The newer draft of the book ends its RNN section's exercises by asking how later
chapters address the fading gradient (its exercise 5, second half; v1.0's 9.4 asks only the first half, as #3).
This lab answers it by experiment, with the cells of v1.0's 10.1 (LSTM) and 10.2 (GRU).

**Why the gates help, measured.** The third chart is the gradient of the loss with respect to each step's input, by
autograd, as a share of the last input's: how much the answer still depends on what came in at step t. Through the
plain RNN it shrinks step by step towards the symbol, like the dashed ρᵏ line; through a gate held near 1 it
arrives almost whole.
""")


def notes(r: Result) -> str:
    return _(NOTES)


SOURCE = (memory.sequences, memory.MemoryNet.forward, memory.train, memory.input_gradients)
