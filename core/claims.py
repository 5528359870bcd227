"""Claims: a sentence that states a number, a trend, a comparison or a regime, built from the numbers it is about.

A claim carries its text, the rule that chose the text (`kind`, e.g. "forecast.at_rest") and the numbers the rule
looked at (`numbers`). One function per idea builds it (one definition of "at rest", one of "as good as the noise
allows"), and every page, act and exercise that says it prints that function's claim. The tests check each kind's
condition against the data the page draws, over the whole range of every control (tests/test_claims.py), so a
sentence written for the default setting cannot go wrong elsewhere unseen.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Claim:
    text: str                                   # the sentence (Markdown-free, numbers formatted)
    kind: str                                   # the rule that chose it: "topic.reading"
    numbers: dict = field(default_factory=dict)   # what the rule decided from, by name

    def __str__(self) -> str:
        return self.text


def claim(kind: str, text: str, **numbers) -> Claim:
    if not kind or "." not in kind:
        raise ValueError("A claim's kind is 'topic.reading', e.g. 'forecast.at_rest'.")
    return Claim(text, kind, numbers)


def ratio(a: float, b: float, floor: float = 1e-12) -> float:
    """a / b, NaN when b is too small for the ratio to mean anything (an error of 1e-30 is no error)."""
    return a / b if abs(b) > floor and math.isfinite(a) and math.isfinite(b) else math.nan


def times(x: float) -> str:
    """A ratio in words: '2.5 times', 'about the same' near 1."""
    if not math.isfinite(x):
        return "not comparable"
    return "about the same" if 0.95 <= x <= 1.05 else f"{x:.1f} times"
