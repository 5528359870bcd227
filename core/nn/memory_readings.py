"""What the memory task's numbers say, as claims (core.claims): whether a cell answers at chance, remembers, or
partly, judged against the spread that guessing itself has over the held-out answers; and how much more of the
loss's gradient a gated cell passes back to the first input than the plain RNN does."""
from __future__ import annotations

import math

from core.checks import check_int, check_real
from core.claims import Claim, claim
from core.i18n import N_, _
from core.nn.memory import CHANCE

REMEMBERS = 0.9      # a cell that answers at least this share right remembers the symbol
NAMES = {"rnn": N_("the plain RNN"), "gru": N_("the GRU"), "lstm": N_("the LSTM")}
STARTS = {"rnn": N_("The plain RNN"), "gru": N_("The GRU"), "lstm": N_("The LSTM")}   # a sentence's first word


def who(kind: str, first: bool = False) -> str:
    """A cell's name in a sentence (first: as its first word), in the language in force."""
    if kind not in NAMES:
        return kind[0].upper() + kind[1:] if first else kind
    return _((STARTS if first else NAMES)[kind])


def chance_band(answers: int) -> float:
    """Three standard deviations of the share right when guessing, over this many answers (1,000: 0.041)."""
    n = check_int("held-out answers", answers, 1)
    return 3 * math.sqrt(CHANCE * (1 - CHANCE) / n)


def recall(kind: str, accuracy: float, delay: int, answers: int = 1000) -> Claim:
    """A cell's held-out accuracy at a delay, in words, by one rule: 'at chance' within chance_band of 1/4 either
    way, 'remembers' from REMEMBERS up, 'partly' between, 'below chance' under the band."""
    acc = check_real("accuracy", accuracy, 0.0, 1.0)
    band = chance_band(answers)
    numbers = dict(accuracy=acc, chance=CHANCE, band=band, delay=delay)
    at = dict(delay=delay, who=who(kind), acc=100 * acc, chance=100 * CHANCE, band=100 * band, answers=answers,
              remembers=100 * REMEMBERS)
    if abs(acc - CHANCE) <= band:
        return claim("memory.chance", _("After a delay of {delay}, {who} answers at chance: {acc:.1f}% right, where "
                                        "guessing gets {chance:.0f}% (give or take {band:.1f} points over {answers:,} "
                                        "answers).").format(**at), **numbers)
    if acc < CHANCE:
        return claim("memory.below_chance", _("After a delay of {delay}, {who} answers worse than guessing: {acc:.1f}% "
                                              "right against {chance:.0f}%.").format(**at), **numbers)
    if acc >= REMEMBERS:
        return claim("memory.remembers", _("After a delay of {delay}, {who} remembers the symbol: {acc:.1f}% "
                                           "right.").format(**at), **numbers)
    return claim("memory.partly", _("After a delay of {delay}, {who} remembers it only partly: {acc:.1f}% right, above "
                                    "chance ({chance:.0f}%) but short of {remembers:.0f}%.").format(**at), **numbers)


def first_input(kind: str, gated: list[float], plain: list[float]) -> Claim:
    """How much of the gradient reaches the first input, relative to the last, for a gated cell against the plain
    RNN (each ||dL/dx_t|| by step): 'more' when the gated cell's share is at least ten times the RNN's, 'about the
    same' within ten times either way, 'less' below."""
    g = _share(gated)
    p = _share(plain)
    r = g / p if p > 0 else (math.inf if g > 0 else math.nan)   # a share that vanished to 0 still compares
    numbers = dict(cell=kind, gated=g, plain=p, ratio=r)
    at = dict(gated=_number(g), who=who(kind), plain=_number(p), ratio=r,
              power=round(math.log10(r)) if math.isfinite(r) and r > 0 else 0)
    if r >= 10:
        text = (_("Of the gradient the last input gets, the first input gets {gated} through {who} and {plain} through "
                  "the plain RNN: where the plain RNN's is 0, the symbol's way back to the answer.")
                if not math.isfinite(r) else
                _("Of the gradient the last input gets, the first input gets {gated} through {who} and {plain} through "
                  "the plain RNN: {ratio:.1f} times as much, the symbol's way back to the answer.") if r < 1000 else
                _("Of the gradient the last input gets, the first input gets {gated} through {who} and {plain} through "
                  "the plain RNN: about 10^{power} times as much, the symbol's way back to the answer."))
        return claim("memory.gradient_more", text.format(**at), **numbers)
    if math.isfinite(r) and r > 0.1:
        return claim("memory.gradient_same", _("Of the gradient the last input gets, the first input gets {gated} "
                                               "through {who} and {plain} through the plain RNN: within ten times of "
                                               "each other.").format(**at), **numbers)
    text = (_("Of the gradient the last input gets, the first input gets {gated} through {who} and {plain} through the "
              "plain RNN: less through the gated cell.") if r <= 0.1 else
            _("Of the gradient the last input gets, the first input gets {gated} through {who} and {plain} through the "
              "plain RNN: both are 0, so the two do not compare."))
    return claim("memory.gradient_less", text.format(**at), **numbers)


def _share(norms: list[float]) -> float:
    norms = [float(x) for x in norms]
    if len(norms) < 2 or not all(math.isfinite(x) and x >= 0 for x in norms):
        raise ValueError(_("Each step's gradient norm is needed, at least two steps, finite and not negative."))
    return norms[0] / norms[-1] if norms[-1] > 0 else 0.0


def level(accuracy: float, answers: int = 1000) -> str:
    """recall()'s verdict on one accuracy as a word: chance, below_chance, remembers or partly."""
    return recall("cell", accuracy, 0, answers).kind.split(".")[1]


def over_delays(kind: str, by_delay: dict, answers: int = 1000) -> Claim:
    """What a cell's final accuracy does as the delay grows (delay -> accuracy, trained at each delay): the longest
    delay up to which it remembers at every delay, and the first delay from which it is at chance (or below) at
    every longer one; or that it remembers at every delay tried."""
    if not by_delay:
        raise ValueError(_("The delay sweep needs at least one delay."))
    delays = sorted(int(d) for d in by_delay)
    acc = {d: check_real("accuracy", by_delay[d], 0.0, 1.0) for d in delays}
    words = {d: level(acc[d], answers) for d in delays}
    kept = [d for d in delays if all(words[e] == "remembers" for e in delays if e <= d)]
    lost = [d for d in delays if all(words[e] in ("chance", "below_chance") for e in delays if e >= d)]
    numbers = dict(cell=kind, remembers_to=kept[-1] if kept else None, chance_from=lost[0] if lost else None,
                   delays=delays, accuracy=[acc[d] for d in delays])
    at = dict(first=delays[0], last=delays[-1], who=who(kind), Who=who(kind, first=True), least=100 * min(acc.values()),
              kept=kept[-1] if kept else 0, kept_acc=100 * acc[kept[-1]] if kept else 0,
              first_acc=100 * acc[delays[0]], lost=lost[0] if lost else 0, lost_acc=100 * acc[lost[0]] if lost else 0,
              last_acc=100 * acc[delays[-1]])
    if len(kept) == len(delays):
        text = (_("Trained at each delay from {first} to {last}, {who} remembers at every one (100% right at each).")
                if min(acc.values()) == 1 else
                _("Trained at each delay from {first} to {last}, {who} remembers at every one (at least {least:.0f}% "
                  "right)."))
        return claim("memory.sweep_holds", text.format(**at), **numbers)
    if lost:
        text = (_("{Who} remembers up to a delay of {kept} ({kept_acc:.0f}% right) and answers at chance from a delay "
                  "of {lost} on ({lost_acc:.0f}% right there).") if kept else
                _("{Who} does not remember even at a delay of {first} ({first_acc:.0f}% right) and answers at chance "
                  "from a delay of {lost} on ({lost_acc:.0f}% right there)."))
        return claim("memory.sweep_falls", text.format(**at), **numbers)
    text = (_("{Who} remembers up to a delay of {kept} ({kept_acc:.0f}% right); at {last}, the longest delay tried, it "
              "is still above chance ({last_acc:.0f}% right).") if kept else
            _("{Who} does not remember even at a delay of {first} ({first_acc:.0f}% right); at {last}, the longest "
              "delay tried, it is still above chance ({last_acc:.0f}% right)."))
    return claim("memory.sweep_partly", text.format(**at), **numbers)


def forget_gate(mean: float, delay: int) -> Claim:
    """The LSTM's mean forget gate as the share of its memory cell kept each step, and over the delay (its power)."""
    f = check_real("forget gate", mean, 0.0, 1.0)
    d = check_int("delay", delay, 0)
    over = f ** d
    at = dict(f=f, share=100 * f, over=100 * over, tiny=over, d=d)
    text = (_("The trained LSTM's forget gate is {f:.3f} on average: each step keeps about {share:.1f}% of its memory "
              "cell, so a gate held there keeps {over:.0f}% over {d} steps (the input gate can add to it on the way).")
            if over >= 0.01 else
            _("The trained LSTM's forget gate is {f:.3f} on average: each step keeps about {share:.1f}% of its memory "
              "cell, so a gate held there keeps {tiny:.1e} of it over {d} steps (the input gate can add to it on the "
              "way)."))
    return claim("memory.forget_kept", text.format(**at), forget=f, delay=d, kept=over)


def _number(x: float) -> str:
    """A share as a learner reads it: 0.143, 2.64; 1.2e-9 for the tiny ones."""
    return f"{x:.3g}" if x == 0 or x >= 1e-3 else f"{x:.1e}".replace("e-0", "e-")
