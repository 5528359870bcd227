"""What the memory task's numbers say, as claims (core.claims): whether a cell answers at chance, remembers, or
partly, judged against the spread that guessing itself has over the held-out answers; and how much more of the
loss's gradient a gated cell passes back to the first input than the plain RNN does."""
from __future__ import annotations

import math

from core.checks import check_int, check_real
from core.claims import Claim, claim, times
from core.nn.memory import CHANCE

REMEMBERS = 0.9      # a cell that answers at least this share right remembers the symbol
NAMES = {"rnn": "the plain RNN", "gru": "the GRU", "lstm": "the LSTM"}


def chance_band(answers: int) -> float:
    """Three standard deviations of the share right when guessing, over this many answers (1,000: 0.041)."""
    n = check_int("held-out answers", answers, 1)
    return 3 * math.sqrt(CHANCE * (1 - CHANCE) / n)


def recall(kind: str, accuracy: float, delay: int, answers: int = 1000) -> Claim:
    """A cell's held-out accuracy at a delay, in words, by one rule: 'at chance' within chance_band of 1/4 either
    way, 'remembers' from REMEMBERS up, 'partly' between, 'below chance' under the band."""
    acc = check_real("accuracy", accuracy, 0.0, 1.0)
    band = chance_band(answers)
    who = NAMES.get(kind, kind)
    numbers = dict(accuracy=acc, chance=CHANCE, band=band, delay=delay)
    said = f"{100 * acc:.1f}% right"
    if abs(acc - CHANCE) <= band:
        return claim("memory.chance", f"After a delay of {delay}, {who} answers at chance: {said}, where guessing "
                     f"gets {100 * CHANCE:.0f}% (give or take {100 * band:.1f} points over {answers:,} answers).",
                     **numbers)
    if acc < CHANCE:
        return claim("memory.below_chance", f"After a delay of {delay}, {who} answers worse than guessing: {said} "
                     f"against {100 * CHANCE:.0f}%.", **numbers)
    if acc >= REMEMBERS:
        return claim("memory.remembers", f"After a delay of {delay}, {who} remembers the symbol: {said}.", **numbers)
    return claim("memory.partly", f"After a delay of {delay}, {who} remembers it only partly: {said}, above "
                 f"chance ({100 * CHANCE:.0f}%) but short of {100 * REMEMBERS:.0f}%.", **numbers)


def first_input(kind: str, gated: list[float], plain: list[float]) -> Claim:
    """How much of the gradient reaches the first input, relative to the last, for a gated cell against the plain
    RNN (each ||dL/dx_t|| by step): 'more' when the gated cell's share is at least ten times the RNN's, 'about the
    same' within ten times either way, 'less' below."""
    g = _share(gated)
    p = _share(plain)
    r = g / p if p > 0 else (math.inf if g > 0 else math.nan)   # a share that vanished to 0 still compares
    who = NAMES.get(kind, kind)
    numbers = dict(cell=kind, gated=g, plain=p, ratio=r)
    head = (f"Of the gradient the last input gets, the first input gets {_number(g)} through {who} and "
            f"{_number(p)} through the plain RNN")
    if r >= 10:
        much = (f"{times(r)} as much" if r < 1000 else f"about 10^{round(math.log10(r))} times as much") \
            if math.isfinite(r) else "where the plain RNN's is 0"
        return claim("memory.gradient_more", f"{head}: {much}, the symbol's way back to the answer.", **numbers)
    if math.isfinite(r) and r > 0.1:
        return claim("memory.gradient_same", f"{head}: within ten times of each other.", **numbers)
    return claim("memory.gradient_less", f"{head}: " + ("less through the gated cell." if r <= 0.1 else
                                                       "both are 0, so the two do not compare."), **numbers)


def _share(norms: list[float]) -> float:
    norms = [float(x) for x in norms]
    if len(norms) < 2 or not all(math.isfinite(x) and x >= 0 for x in norms):
        raise ValueError("Each step's gradient norm is needed, at least two steps, finite and not negative.")
    return norms[0] / norms[-1] if norms[-1] > 0 else 0.0


def level(accuracy: float, answers: int = 1000) -> str:
    """recall()'s verdict on one accuracy as a word: chance, below_chance, remembers or partly."""
    return recall("cell", accuracy, 0, answers).kind.split(".")[1]


def over_delays(kind: str, by_delay: dict, answers: int = 1000) -> Claim:
    """What a cell's final accuracy does as the delay grows (delay -> accuracy, trained at each delay): the longest
    delay up to which it remembers at every delay, and the first delay from which it is at chance (or below) at
    every longer one; or that it remembers at every delay tried."""
    if not by_delay:
        raise ValueError("The delay sweep needs at least one delay.")
    delays = sorted(int(d) for d in by_delay)
    acc = {d: check_real("accuracy", by_delay[d], 0.0, 1.0) for d in delays}
    words = {d: level(acc[d], answers) for d in delays}
    who = NAMES.get(kind, kind)
    kept = [d for d in delays if all(words[e] == "remembers" for e in delays if e <= d)]
    lost = [d for d in delays if all(words[e] in ("chance", "below_chance") for e in delays if e >= d)]
    numbers = dict(cell=kind, remembers_to=kept[-1] if kept else None, chance_from=lost[0] if lost else None,
                   delays=delays, accuracy=[acc[d] for d in delays])
    if len(kept) == len(delays):
        least = "100% right at each" if min(acc.values()) == 1 else f"at least {100 * min(acc.values()):.0f}% right"
        return claim("memory.sweep_holds", f"Trained at each delay from {delays[0]} to {delays[-1]}, {who} "
                     f"remembers at every one ({least}).", **numbers)
    head = (f"{who[0].upper()}{who[1:]} remembers up to a delay of {kept[-1]} ({100 * acc[kept[-1]]:.0f}% right)"
            if kept else f"{who[0].upper()}{who[1:]} does not remember even at a delay of {delays[0]} "
                         f"({100 * acc[delays[0]]:.0f}% right)")
    if lost:
        return claim("memory.sweep_falls", f"{head} and answers at chance from a delay of {lost[0]} on "
                     f"({100 * acc[lost[0]]:.0f}% right there).", **numbers)
    return claim("memory.sweep_partly", f"{head}; at {delays[-1]}, the longest delay tried, it is still above "
                 f"chance ({100 * acc[delays[-1]]:.0f}% right).", **numbers)


def forget_gate(mean: float, delay: int) -> Claim:
    """The LSTM's mean forget gate as the share of its memory cell kept each step, and over the delay (its power)."""
    f = check_real("forget gate", mean, 0.0, 1.0)
    d = check_int("delay", delay, 0)
    over = f ** d
    said = f"{100 * over:.0f}%" if over >= 0.01 else f"{over:.1e} of it"
    return claim("memory.forget_kept", f"The trained LSTM's forget gate is {f:.3f} on average: each step keeps about "
                 f"{100 * f:.1f}% of its memory cell, so a gate held there keeps {said} over {d} steps (the input "
                 "gate can add to it on the way).", forget=f, delay=d, kept=over)


def _number(x: float) -> str:
    """A share as a learner reads it: 0.143, 2.64; 1.2e-9 for the tiny ones."""
    return f"{x:.3g}" if x == 0 or x >= 1e-3 else f"{x:.1e}".replace("e-0", "e-")
