"""Training settings: each declared once (core.runs.config), checked, parsed from URLs and the command line."""
from dataclasses import fields, replace

import pytest

from core.nn.cells import CELLS
from core.runs.config import (FORM_GROUPS, FORM_SETTINGS, PRESETS, SETTINGS, TrainConfig, config_overrides,
                         parse_overrides, with_overrides)

@pytest.mark.parametrize("kwargs, message", [
    (dict(lr=0), "lr"), (dict(epochs=0), "epochs"), (dict(cell="cnn"), "cell"), (dict(tokenizer="words"), "tokenizer"),
    (dict(batch_size=0), "batch_size"), (dict(split="book", truncation="detach"), "book"), (dict(dropout=2.0), "dropout"),
    (dict(cell="scratch", num_layers=2), "scratch"), (dict(device="tpu"), "device"), (dict(bpe_vocab=10), "bpe_vocab"),
])
def test_config_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TrainConfig(**kwargs)


def test_presets_are_valid_and_round_trip():
    for name, preset in PRESETS.items():
        cfg = preset.config
        assert TrainConfig.from_dict(cfg.to_dict()) == cfg, name
    assert PRESETS["book"].config.num_train == 10_000 and PRESETS["book"].config.hidden_size == 32 and PRESETS["book"].config.lr == 1.0
    assert PRESETS["bpe"].config.bpe_vocab == 1024 and PRESETS["bpe"].config.embed_dim == 64 and PRESETS["bpe"].config.hidden_size == 128
    with pytest.raises(ValueError, match="Unknown"):
        TrainConfig.from_dict({"hidden": 3})


def test_config_overrides_and_parse_overrides_round_trip():
    base = PRESETS["whole"].config
    config = replace(base, lr=0.0125, hidden_size=64, cell="gru")
    names = ("lr", "hidden_size", "cell", "epochs")
    raw = config_overrides(base, config, names)
    assert raw == {"lr": "0.0125", "hidden_size": "64", "cell": "gru"}
    back, problems = parse_overrides(base, raw)
    assert back == config and problems == []


def test_parse_overrides_keeps_the_good_and_explains_the_bad():
    base = PRESETS["book"].config
    config, problems = parse_overrides(
        base, {"lr": "0.5", "epochs": "ten", "cell": "cnn", "batch_size": "9000", "truncation": "detach"})
    assert config == replace(base, lr=0.5)
    text = " ".join(problems)
    assert len(problems) == 4
    assert "epochs takes a whole number" in text and "cell" in text and "at most 8192" in text
    assert "zero state" in text  # truncation 'detach' does not go with the book's split


def test_every_field_is_declared_once_with_label_and_range():
    assert list(SETTINGS) == [f.name for f in fields(TrainConfig)]
    for s in SETTINGS.values():
        assert s.label, s.name
        assert s.default == getattr(TrainConfig(), s.name)
        assert s.check(s.default) == s.default
        assert s.choices or s.kind is str or (s.lo is not None and s.hi is not None), s.name
        assert s.group in FORM_GROUPS + ("",)
    assert SETTINGS["cell"].choices == tuple(CELLS)                  # the cell registry is the one list
    assert SETTINGS["cell"].word("scratch") == CELLS["scratch"].label
    assert SETTINGS["hidden_size"].hi == 2048 and SETTINGS["epochs"].hi == 10_000   # what the form offers
    assert "weight_decay" not in FORM_SETTINGS and "hidden_size" in FORM_SETTINGS


@pytest.mark.parametrize("text, value", [("12", 12), ("12.0", 12), ("1e3", 1000)])
def test_int_settings_parse_whole_numbers(text, value):
    assert SETTINGS["hidden_size"].parse(text) == value


@pytest.mark.parametrize("name, text, message", [
    ("hidden_size", "4096", "at most 2048"), ("hidden_size", "1.5", "whole number"), ("lr", "nan", "finite"),
    ("lr", "0", "at least"), ("cell", "cnn", "one of scratch, rnn, torch, gru, lstm"), ("epochs", "x" * 10_000, "…"),
])
def test_bad_values_get_a_short_clear_message(name, text, message):
    with pytest.raises(ValueError, match=message) as info:
        SETTINGS[name].parse(text)
    assert len(str(info.value)) < 200  # a 10,000-character value is not echoed whole


def test_command_line_overrides_use_the_same_declarations():
    config = with_overrides(PRESETS["tiny"].config, ["cell=gru", "hidden_size=48", "lr=0.02"], device="cpu")
    assert (config.cell, config.hidden_size, config.lr, config.device) == ("gru", 48, 0.02, "cpu")
    with pytest.raises(ValueError, match="unknown setting"):
        with_overrides(PRESETS["tiny"].config, ["hidden=3"])
    with pytest.raises(ValueError, match="at most 2048"):
        with_overrides(PRESETS["tiny"].config, ["hidden_size=4096"])


def test_every_number_field_of_the_form_says_its_range():
    from core.settings import allowed
    from core.runs.config import FORM_SETTINGS, SETTINGS
    for name in FORM_SETTINGS:
        s = SETTINGS[name]
        if s.kind in (int, float) and not s.choices:
            assert allowed(s).startswith("Allowed: "), name
    assert allowed(SETTINGS["hidden_size"]) == "Allowed: 1 to 2,048."
