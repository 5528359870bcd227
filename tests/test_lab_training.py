"""Training (core.labs.training): its computation is a training run, so the claims sweep does not walk its controls
(TRAINS); its one reading is checked on any history here, and its notebook's settings are the form's."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from core.labs import training as lab
from core.runs.config import PRESETS
from core.runs.record import HistoryRow

NAMED: list = []


def holds(c, r) -> bool:
    last = r.history[-1]
    rules = {"run.train_above_val": lambda: last.epoch > 0 and last.train_ppl > last.val_ppl}
    return rules[c.kind]()


def complete(claims, r) -> None:
    """Nothing a run must say beyond its one reading."""


def examples() -> list:
    """Results on histories of every shape its reading tells apart (the Chinese pages' test reads them)."""
    rows = [[HistoryRow(0, 0, float("nan"), 28.0, 4.8, 1.0, 1.0, 1.0)],
            [HistoryRow(0, 0, float("nan"), 28.0, 4.8, 1.0, 1.0, 1.0), HistoryRow(1, 10, 9.0, 10.0, 3.3, 1.0, 1.0, 1.0)],
            [HistoryRow(0, 0, float("nan"), 28.0, 4.8, 1.0, 1.0, 1.0), HistoryRow(2, 20, 11.0, 9.5, 3.2, 1.0, 1.0, 1.0)]]
    return [lab.Result(PRESETS["tiny"].config, h, 1.5) for h in rows]


@settings(max_examples=40, deadline=None)
@given(train=st.floats(1.0, 50.0), val=st.floats(1.0, 50.0), epoch=st.integers(0, 30))
def test_its_reading_holds_on_any_history(train, val, epoch):
    r = lab.Result(PRESETS["tiny"].config, [HistoryRow(epoch, epoch, train, val, 1.0, 1.0, 1.0, 1.0)], 1.0)
    said = lab.readings(r)
    assert (len(said) == 1) == (epoch > 0 and train > val)
    assert all(holds(c, r) for c in said)


def test_a_notebooks_settings_are_the_presets_with_the_forms_over_them():
    config = lab.settings_from({"preset": "tiny", "lr": 0.05, "epochs": 2})
    assert (config.lr, config.epochs, config.hidden_size) == (0.05, 2, PRESETS["tiny"].config.hidden_size)
    for bad in ({"preset": "huge"}, {"preset": "tiny", "bogus": 1}, {"preset": "tiny", "lr": -1.0}):
        with pytest.raises(ValueError):
            lab.settings_from(bad)


def test_a_notebook_of_a_preset_that_does_not_exist_is_refused_when_asked_for():
    """Issue 63: `python -m core notebook training --set preset=...` took any text, and the notebook failed later with
    a KeyError. The preset's choices are declared, so the command says which presets there are."""
    from core.notebooks import cli
    with pytest.raises(ValueError, match="tiny"):
        cli.parse_sets("training", ["preset=huge"])
    assert cli.parse_sets("training", ["preset=tiny"]) == {"preset": "tiny"}
