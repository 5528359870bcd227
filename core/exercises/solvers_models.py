"""Solvers of the exercises on trained models (sampling from the pretrained RNN, training runs, the chapter's
passage run): each runs the real model or loop with the exercise's settings and returns a Solution built from that
run's numbers (core.exercises.bank pairs them with their questions)."""
from __future__ import annotations

import math
from dataclasses import replace

from core.exercises.types import Solution, report
from core.i18n import N_, _, listing, sentences

# --- Sampling ----------------------------------------------------------------------------------------------

def _pretrained():
    from core.runs.saved import load_pretrained
    return load_pretrained()


def cold_temperature(s: dict) -> Solution:
    from core.nn.sampling import sample
    lm = _pretrained()
    greedy = sample(lm, s["prefix"], s["length"], temperature=0.0).text
    cold = [sample(lm, s["prefix"], s["length"], temperature=s["temperature"], seed=seed).text for seed in range(3)]
    same = all(c == greedy for c in cold)
    answer = "the likeliest character every time (greedy)" if same else "a different text for each seed"
    at = dict(T=s["temperature"], first=repr(cold[0][:40]), second=repr(cold[1][:40]),
              differ=sum(c != greedy for c in cold))
    text = (_("At T = {T:g}, three samples with different seeds all read {first}…, the same as greedy decoding: "
              "dividing the scores by a tiny T makes the largest one win with probability almost 1.") if same else
            _("At T = {T:g}, {differ} of three seeds give a text other than greedy decoding's, such as {first}… and "
              "{second}…. Different, not random: each character is drawn from the model's probabilities, so likely "
              "characters still come most often."))
    return Solution(answer, text.format(**at), {_("samples equal to greedy"): sum(c == greedy for c in cold)})


def top_k_one(s: dict) -> Solution:
    from core.nn.sampling import sample
    lm = _pretrained()
    greedy = sample(lm, s["prefix"], s["length"], temperature=0.0).text
    k1 = sample(lm, s["prefix"], s["length"], temperature=s["temperature"], top_k=1, seed=s["seed"]).text
    answer = "yes" if k1 == greedy else "no"
    text = (_("At T = {T:g} with top-k = 1: {k1}…; greedy: {greedy}…. The same text: with one character left to draw "
              "from, the temperature has nothing to spread over.") if k1 == greedy else
            _("At T = {T:g} with top-k = 1: {k1}…; greedy: {greedy}…. The texts differ."))
    return Solution(answer, text.format(T=s["temperature"], k1=repr(k1[:40]), greedy=repr(greedy[:40])),
                    {_("identical"): k1 == greedy})


def greedy_surprisal(s: dict) -> Solution:
    from core.nn.sampling import sample
    lm = _pretrained()
    out = sample(lm, s["prefix"], s["length"], temperature=s["temperature"], seed=s.get("seed", 0))
    bits = float(out.surprisal_bits.mean())
    answer = "under 1 bit" if bits < 1 else "1 to 3 bits" if bits <= 3 else "over 3 bits"
    return Solution(answer, _("The model's own mean surprisal of its {n} characters at T = {T:g} is {bits:.3f} bits "
                              "per character (a uniform guess over {V} characters would cost {uniform:.2f}).").format(
                        n=s["length"], T=s["temperature"], bits=bits, V=len(lm.vocab), uniform=math.log2(len(lm.vocab))),
                    {_("bits per character"): bits})


# --- Training and the chapter's passage run ------------------------------------------------------------------

def untrained_perplexity(s: dict) -> Solution:
    """The book preset's training perplexity before any step: the model built and scored, no epoch trained."""
    from core.text.corpus import load_corpus
    from core.runs.data import prepare_data
    from core.nn.models import perplexity
    from core.runs.config import PRESETS
    from core.nn.device import resolve_device
    from core.runs.loop import evaluate, scoring_path
    cfg = replace(PRESETS["book"].config, num_train=s["windows"], num_val=100, epochs=1, hidden_size=s["h"],
                  seed=s.get("seed", 0))
    data, device = prepare_data(cfg, load_corpus()), resolve_device(cfg.device)
    V = len(data.vocab)
    net = cfg.model(V, device)
    start = perplexity(evaluate(net, data, cfg, device, part="train", path=scoring_path(cfg, net, device)))
    gap = abs(start - V) / V
    text = (_("Before the first step the perplexity on the training windows is {start:.3f}, against {V} for a "
              "perfectly uniform guess over the {V} tokens, {gap:.2g}% apart: the random weights give every character "
              "almost the same probability.") if gap < 0.05 else
            _("Before the first step the perplexity on the training windows is {start:.3f}, against {V} for a "
              "perfectly uniform guess over the {V} tokens, {gap:.2g}% apart: the random weights already favour some "
              "characters."))
    return Solution(start, text.format(start=start, V=V, gap=100 * gap),
                    {_("perplexity at epoch 0"): start, _("tokens"): V},
                    {math.log(V): _("{nats:.3f} is ln {V}, the cross-entropy in nats; perplexity is e to that.").format(
                        nats=math.log(V), V=V)})


def _passage(s: dict, **overrides):
    """The passage run with the exercise's seed and these changes: the chapter's stored run (what Act 4 shows)
    when that is the same run, else trained now (with progress for the page)."""
    from core.lesson import passage
    from core.text.corpus import load_corpus
    from core.runs.loop import train
    cfg = replace(passage.config(s.get("seed", 0)), **overrides)
    baked = _stored_passage(cfg)
    if baked is not None:
        return baked
    return train(cfg, text=load_corpus(), on_progress=report, report_every=0.25)


def slow_learning_rate(s: dict) -> Solution:
    r = _passage(s, lr=s["lr"])
    best = min(row.train_ppl for row in r.history)
    return Solution("yes" if best < 2 else "no",
                    _("With learning rate {lr:g}, the passage run's training perplexity goes from {first:.1f} to "
                      "{last:.2f} in 60 epochs (lowest {best:.2f}).").format(lr=s["lr"], first=r.history[0].train_ppl,
                                                                            last=r.history[-1].train_ppl, best=best),
                    {_("lowest perplexity"): best})


def _stored_passage(cfg):
    """The chapter's stored passage run when cfg is its configuration (no retraining of a run the page already
    has); None otherwise, or when it cannot be read."""
    from core.lesson import store as passage_store
    try:
        baked = passage_store.load_baked()
    except ValueError:
        return None
    return baked if cfg.same_run(baked.meta.config) else None


TRAINED_NOW = N_("a run trained for this answer: the stored run Act 4 shows has other settings or epochs")
FROM_STORED = N_("the stored run Act 4 shows")


def _passage_model(s: dict, epochs: int) -> tuple:
    """The passage run's model after `epochs` epochs and where it came from (FROM_STORED or TRAINED_NOW): the
    stored run's weights at that epoch where it kept them (a shorter run with the same seed passes through the very
    same weights), else trained now."""
    from core.lesson import passage
    baked = _stored_passage(passage.config(s.get("seed", 0)))
    if baked is not None and epochs in baked.models:
        return baked.models[epochs], FROM_STORED
    return _passage(s, epochs=epochs).lm, TRAINED_NOW


def passage_held_out(s: dict) -> Solution:
    from core.lesson.store import Baked
    run = _passage(s)
    history = run.history
    first, last = history[0].val_ppl, history[-1].val_ppl
    where = FROM_STORED if isinstance(run, Baked) else TRAINED_NOW
    answer = "higher" if last > 1.1 * first else "lower" if last < first / 1.1 else "about the same"
    text = (_("On the text after the passage, perplexity goes from {first:.1f} before training to {last:.1f} after "
              "{epochs} epochs ({where}), while on the passage itself it falls to {train:.2f}: it memorised, it did "
              "not learn English.") if answer == "higher" else
            _("On the text after the passage, perplexity goes from {first:.1f} before training to {last:.1f} after "
              "{epochs} epochs ({where}), while on the passage itself it falls to {train:.2f}: it learnt something "
              "general."))
    return Solution(answer, text.format(first=first, last=last, epochs=history[-1].epoch, where=_(where),
                                        train=history[-1].train_ppl),
                    {_("held-out before"): first, _("held-out after"): last})


def forcing_or_free(s: dict) -> Solution:
    from core.lesson import passage
    from core.text.corpus import load_corpus
    lm, where = _passage_model(s, s["epochs"])
    tf = passage.teacher_forcing(lm, passage.passage(load_corpus()))
    answer = "teacher forcing" if tf.forced_accuracy > tf.free_accuracy else "free running" \
        if tf.free_accuracy > tf.forced_accuracy else "the same"
    text = (_("After {epochs} epochs ({where}): {forced:.0f}% of the passage's next characters right when fed the true "
              "previous ones, {free:.0f}% when fed its own guesses. One wrong guess changes everything it reads next.")
            if tf.free_accuracy < tf.forced_accuracy else
            _("After {epochs} epochs ({where}): {forced:.0f}% of the passage's next characters right when fed the true "
              "previous ones, {free:.0f}% when fed its own guesses. It has learnt the passage well enough that its own "
              "guesses are the true text."))
    return Solution(answer, text.format(epochs=s["epochs"], where=_(where), forced=100 * tf.forced_accuracy,
                                        free=100 * tf.free_accuracy),
                    {_("teacher forcing (%)"): 100 * tf.forced_accuracy, _("free running (%)"): 100 * tf.free_accuracy})


# --- The chapter's end: how later chapters answer the RNN's problem ----------------------------------------------

def gated_path(s: dict) -> Solution:
    """The book's exercise 5, second half: an LSTM's memory cell with its forget gate open (forget bias large) and
    its input gate shut carries the gradient back over T steps by autograd; with the forget gate at its untrained
    middle (bias 0, f about 0.5) it fades like a tanh RNN's."""
    import torch
    from core.exercises.solvers_maths import fate
    torch.manual_seed(0)
    h = s["h"]
    cell = torch.nn.LSTMCell(h, h).double()
    with torch.no_grad():            # torch orders the gates input, forget, cell, output
        cell.bias_ih[:h] = -s["input_bias"]
        cell.bias_ih[h:2 * h] = s["forget_bias"]
        cell.bias_hh.zero_()
    xs = torch.randn(s["T"], 1, h, dtype=torch.float64)
    c0 = torch.zeros(1, h, dtype=torch.float64, requires_grad=True)
    hx, cx = torch.zeros(1, h, dtype=torch.float64), c0
    for x in xs:
        hx, cx = cell(x, (hx, cx))
    g = torch.randn(1, h, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    g = g / g.norm()
    (grad,) = torch.autograd.grad((cx * g).sum(), c0)
    norm = float(grad.norm())
    answer = fate(norm)
    f = 1 / (1 + math.exp(-s["forget_bias"]))
    gate = f"f = 1 - {1 - f:.1e}" if f > 0.999 else _("f ≈ {f:.3g} before its inputs move it").format(f=f)
    return Solution(answer, _("An LSTM cell with forget-gate bias {forget:g} ({gate}) and input-gate bias -{input:g}: a "
                              "gradient of norm 1 on its memory cell, sent back {T} steps by autograd, has norm "
                              "{norm:.6g}. The cell's memory is updated by adding, and each step back multiplies the "
                              "gradient by the forget gate, not by W_hh and tanh's slopes: a network that learns to "
                              "keep that gate open keeps its long-range gradient. That is the next chapter's answer "
                              "(GRU and LSTM); attention, later, reaches every earlier token directly.").format(
                        forget=s["forget_bias"], gate=gate, input=s["input_bias"], T=s["T"], norm=norm),
                    {_("norm after T steps"): norm, _("forget gate f"): f})



# --- Memory and gates --------------------------------------------------------------------------------------------

def rnn_chance_delay(s: dict) -> Solution:
    """The stored delay sweep (python -m core gates): the first delay from which the plain RNN, its seeds' mean
    accuracy, is at chance at every longer delay tried."""
    import numpy as np
    from core.nn import memory_readings, memory_store
    sweep = memory_store.load().delays[s["cell"]]
    seeds = len(next(iter(sweep.values())))
    said = memory_readings.over_delays(s["cell"], {d: float(np.mean(a)) for d, a in sweep.items()}, 1000 * seeds)
    at = said.numbers["chance_from"]
    shown = listing(f"{d}: {100 * float(np.mean(a)):.0f}%" for d, a in sorted(sweep.items()))
    why = (_("Each step the plain RNN's memory of the symbol passes through W_hh and tanh again, and its gradient "
             "shrinks like ρᵏ on the way back, so the training signal that would teach it to keep the symbol fades "
             "with the delay.") if s["cell"] == "rnn" else
           _("A gate held near 1 carries the symbol, and its gradient, across the delay; how long a delay it learns to "
             "bridge in these few steps is what the sweep shows."))
    means = _("The sweep's means over {seeds} seeds by delay: {shown}.").format(seeds=seeds, shown=shown)
    return Solution(at if at is not None else 0, sentences(said, means, why), {_("first delay at chance"): at})


def forget_share(s: dict) -> Solution:
    """What an LSTM's memory cell keeps over D steps when nothing but its forget gate's bias moves it: the project's
    own cell (core.nn.gated) with every weight 0 and the cell state starting at 1, stepped D times."""
    import torch
    from core.nn.gated import GatedCell
    cell = GatedCell("lstm", 1, 1)
    with torch.no_grad():
        for p in cell.parameters():
            p.zero_()
        cell.gate_bias("f").fill_(s["bias"])
    state = (torch.zeros(1, 1), torch.ones(1, 1))
    with torch.no_grad():
        for _step in range(s["delay"]):
            state = cell.step(torch.zeros(1, 1), state)
    kept, f = float(state[1]), 1 / (1 + math.exp(-s["bias"]))
    return Solution(kept, _("With every weight 0 the candidate is tanh(0) = 0, so each step only multiplies the "
                            "memory cell by the forget gate, σ({bias:g}) = {f:.4f}; after {delay} steps it keeps "
                            "{kept:.4g} of itself. Training moves the gate: a bias of 3 starts it where the memory "
                            "lasts.").format(bias=s["bias"], f=f, delay=s["delay"], kept=kept),
                    {_("kept"): kept, _("forget gate"): f}, {round(f, 4): _("that is one step's share: the memory is "
                                                                            "multiplied by it at every step of the "
                                                                            "delay")})


def first_input_ratio(s: dict) -> Solution:
    """The stored comparison: the share of the last input's gradient that reaches the first input, through the
    trained gated cell against the trained plain RNN, by autograd (core.nn.memory.input_gradients)."""
    from core.nn import memory, memory_readings, memory_store
    saved = memory_store.load()
    delay = saved.comparison.delay
    grads = {k: memory.input_gradients(saved.cells[k].net, delay) for k in (s["cell"], "rnn")}
    said = memory_readings.first_input(s["cell"], list(grads[s["cell"]]), list(grads["rnn"]))
    r = said.numbers["ratio"]
    answer = "about the same" if 0.1 < r < 10 else "10 to 1,000 times as much" if 10 <= r < 1000 else \
        "over 1,000 times as much" if r >= 1000 else "less"
    return Solution(answer, _("{said} (delay {delay}; by autograd on held-out sequences).").format(said=said.text,
                                                                                                  delay=delay),
                    {_("ratio"): r, _("gated share"): said.numbers["gated"], _("plain share"): said.numbers["plain"]})


def cell_parameters(s: dict) -> Solution:
    """The parameters of the project's own cell (core.nn.gated) with n inputs and h hidden units, counted."""
    from core.nn.gated import KINDS, GatedCell
    cell = GatedCell(s["cell"], s["n"], s["h"])
    count, g, n, h = sum(p.numel() for p in cell.parameters()), KINDS[s["cell"]], s["n"], s["h"]
    text = {"lstm": _("Each of the {g} pre-activations (the LSTM's input, forget and output gates and its candidate) "
                      "has an {h} × {n} input weight, an {h} × {h} hidden weight and two biases of {h} (torch keeps "
                      "bias_ih and bias_hh): {g} × ({h}·{n} + {h}·{h} + 2·{h}) = {count:,}."),
            "gru": _("Each of the {g} pre-activations (the GRU's reset and update gates and its candidate) has an {h} × "
                     "{n} input weight, an {h} × {h} hidden weight and two biases of {h} (torch keeps bias_ih and "
                     "bias_hh): {g} × ({h}·{n} + {h}·{h} + 2·{h}) = {count:,}."),
            "rnn": _("Each of the {g} pre-activations (the plain RNN's one) has an {h} × {n} input weight, an {h} × {h} "
                     "hidden weight and two biases of {h} (torch keeps bias_ih and bias_hh): {g} × ({h}·{n} + {h}·{h} "
                     "+ 2·{h}) = {count:,}.")}[s["cell"]]
    return Solution(count, text.format(g=g, h=h, n=n, count=count),
                    {_("parameters"): count}, {float(g * (h * n + h * h + h)): _("one bias per gate: torch's layout, "
                                                                                "which the cell keeps, has two that "
                                                                                "add"),
                                               **({float(h * n + h * h + 2 * h): _("that is one gate's share: this "
                                                                                   "cell has {g} sets of weights")
                                                   .format(g=g)} if g > 1 else {})})
