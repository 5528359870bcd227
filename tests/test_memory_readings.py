"""The memory task's claims (core.nn.memory_readings): each rule's condition at both bounds, pinned here from the
binomial spread of guessing, independently of the code's own arithmetic."""
import math

import pytest

from core.nn import memory_readings as R


def test_at_chance_is_the_spread_of_guessing_either_way():
    band = 3 * math.sqrt(0.25 * 0.75 / 1000)             # 0.0411
    assert R.chance_band(1000) == pytest.approx(band)
    for acc in (0.25, 0.25 + band - 1e-9, 0.25 - band + 1e-9):
        assert R.recall("rnn", acc, 40).kind == "memory.chance"
    assert R.recall("rnn", 0.25 + band + 1e-6, 40).kind == "memory.partly"
    assert R.recall("rnn", 0.25 - band - 1e-6, 40).kind == "memory.below_chance"
    assert R.recall("gru", 0.9, 40).kind == "memory.remembers" and R.recall("gru", 0.8999, 40).kind == "memory.partly"
    text = R.recall("rnn", 0.266, 40).text
    assert "answers at chance: 26.6% right" in text and "4.1 points over 1,000 answers" in text


def test_the_first_input_s_share_of_the_gradient_compares_by_ten_times_either_way():
    assert R.first_input("lstm", [0.5, 1.0], [0.04, 1.0]).kind == "memory.gradient_more"       # 12.5 times
    assert R.first_input("lstm", [0.5, 1.0], [0.06, 1.0]).kind == "memory.gradient_same"       # 8.3 times
    assert R.first_input("lstm", [0.001, 1.0], [0.5, 1.0]).kind == "memory.gradient_less"
    vanished = R.first_input("gru", [0.5, 1.0], [0.0, 1.0])
    assert vanished.kind == "memory.gradient_more" and "plain RNN's is 0" in vanished.text
    assert "about 10^10 times" in R.first_input("lstm", [0.5, 1.0], [5e-11, 1.0]).text
    with pytest.raises(ValueError, match="at least two steps"):
        R.first_input("lstm", [1.0], [1.0])
    with pytest.raises(ValueError, match="accuracy"):
        R.recall("rnn", 1.5, 40)
