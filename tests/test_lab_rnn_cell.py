"""RNN cell (core.labs.rnn_cell): the rule its claim is checked by over every control's range
(tests/test_claims_sweep.py walks each control and the NAMED settings with them): which input is cheaper, one-hot or
an embedding, counted here from the weights each needs."""
from __future__ import annotations

import numpy as np
import pytest

from core.claims import Claim
from core.labs import rnn_cell as lab

NAMED = [dict(word="unfathomable", t=5), dict(word="ab"), dict(word="hello world", h=8, letter="o"),
         dict(V=2, h2=1), dict(V=100_000, h2=10_000)]


def holds(c: Claim, r) -> bool:
    run = r.run
    cases = [(len(run.vocab), run.params["W_hh"].shape[0], 2), (28, 256, 64), (10_000, 256, 256), (10_000, 256, 64)]
    rules = {"params.input_choice": lambda: c.numbers["cheaper"] == sum(V * d + d * h < V * h for V, h, d in cases)
             and all(f"|V| = {V:,}, h = {h}, d = {d}: " in c.text for V, h, d in cases)}
    return rules[c.kind]()


def complete(claims: list[Claim], r) -> None:
    """The step shown is the one asked for (the last where t is beyond the word), and its loss is -log P."""
    step = r.step
    assert step.t == min(r.settings.t, r.run.steps)
    assert step.loss == pytest.approx(-np.log(step.P[step.target_id]))


def test_a_wrong_count_fails_and_a_bad_letter_is_refused():
    r = lab.compute(lab.Settings())
    c = lab.readings(r)[0]
    assert holds(c, r)
    assert not holds(Claim(c.text, c.kind, {**c.numbers, "cheaper": c.numbers["cheaper"] + 1}), r)
    with pytest.raises(ValueError, match="feeds in only the letters"):
        lab.compute(lab.Settings(letter="z"))
