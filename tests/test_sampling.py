"""Sampling: greedy, seeds, temperature, top-k/top-p, unknown characters, and the shipped model."""
import math
import tracemalloc

import numpy as np
import pytest

from core.assets import HELD_OUT_PPL
import torch

from core.nn import probe, sampling
from core.runs.saved import load_pretrained
from core.nn.models import ModelSpec, RNNLM
from core.nn.sampling import LanguageModel, Stepper, distribution
from core.text.tokens import CharVocab


@pytest.fixture(scope="module")
def lm():
    torch.manual_seed(0)
    vocab = CharVocab.build("abcdefghijklmnopqrstuvwxyz ")
    net = RNNLM(ModelSpec(len(vocab), 16, "rnn"))
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(4)
    return LanguageModel(net, vocab)


def test_greedy_is_deterministic(lm):
    a = sampling.sample(lm, "the ", 50, 0.0)
    b = sampling.sample(lm, "the ", 50, 0.0, seed=123)
    assert a.text == b.text and len(a.text) == 50


def test_seeded_sampling_is_reproducible(lm):
    assert sampling.sample(lm, "abc", 80, 1.0, seed=7).text == sampling.sample(lm, "abc", 80, 1.0, seed=7).text
    assert sampling.sample(lm, "abc", 80, 1.0, seed=7).text != sampling.sample(lm, "abc", 80, 1.0, seed=8).text


def test_low_temperature_approaches_greedy(lm):
    greedy = sampling.sample(lm, "the ", 40, 0.0).text
    assert sampling.sample(lm, "the ", 40, 1e-4, seed=3).text == greedy


def test_entropy_grows_with_temperature():
    logits = np.array([3.0, 1.0, 0.5, -1.0, 0.0])
    ent = [sampling.entropy_bits(distribution(logits, t)) for t in (0.0, 0.25, 0.5, 1.0, 2.0, 10.0)]
    assert ent[0] == 0.0 and all(a < b for a, b in zip(ent, ent[1:]))
    assert ent[-1] < math.log2(5) + 1e-9


def test_top_k_and_top_p_on_hand_made_distributions():
    logits = np.log(np.array([0.5, 0.2, 0.15, 0.1, 0.05]))
    assert np.count_nonzero(distribution(logits, 1.0, top_k=2)) == 2
    np.testing.assert_allclose(distribution(logits, 1.0, top_k=2)[:2], [0.5 / 0.7, 0.2 / 0.7])
    assert np.count_nonzero(distribution(logits, 1.0, top_p=0.5)) == 1
    assert np.count_nonzero(distribution(logits, 1.0, top_p=0.7)) == 2
    assert np.count_nonzero(distribution(logits, 1.0, top_p=0.71)) == 3
    assert np.count_nonzero(distribution(logits, 1.0, top_p=1.0)) == 5
    with pytest.raises(ValueError, match="top_k"):
        distribution(logits, 1.0, top_k=0)


def test_unknown_characters_and_empty_prefix(lm):
    out = sampling.sample(lm, "Héllo, wörld!", 10, 0.5, seed=1)
    assert out.prefix == "h llo w rld " and out.unknown == []
    out2 = sampling.sample(lm, "", 10, 0.0)
    assert len(out2.text) == 10 and out2.prefix == ""


def test_unknown_characters_are_reported():
    vocab = CharVocab.build("abc ")
    net = RNNLM(ModelSpec(len(vocab), 4, "rnn"))
    lm = LanguageModel(net, vocab)
    out = sampling.sample(lm, "abz d", 5, 0.0)
    assert out.unknown == ["d", "z"] and out.prefix == "ab "


def test_hidden_states_shape(lm):
    assert probe.hidden_states(lm, "the time machine").shape == (len("the time machine"), 16)


def test_memory_does_not_grow_with_length(lm):
    """What the generator keeps (Python memory allocated in core/nn/sampling.py and still held after n tokens) is the
    same after 300 tokens and after 6,000: only the recurrent state is carried. Counted from the allocations made
    in that file, not the process's peak, which any other thread of the test process could raise."""
    def held(n):
        gen = sampling.stream(lm, "a", 1.0, seed=0)
        next(gen)
        tracemalloc.start()
        for _, _ in zip(range(n), gen):
            pass
        snap = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(True, sampling.__file__)])
        tracemalloc.stop()
        return sum(stat.size for stat in snap.statistics("filename"))
    small, large = held(300), held(6000)
    assert large <= small * 1.25 + 2048  # only the recurrent state is carried


def test_stream_matches_sample(lm):
    out = sampling.sample(lm, "the ", 25, 0.9, seed=4)
    streamed = [t for _, (t, _) in zip(range(25), sampling.stream(lm, "the ", 0.9, seed=4))]
    assert streamed == out.token_ids


def test_invalid_arguments(lm):
    for kwargs, message in ((dict(length=0), "length"), (dict(temperature=-1), "temperature"),
                            (dict(prefix="x" * 3000), "prefix")):
        args = dict(prefix="a", length=5, temperature=1.0)
        args.update(kwargs)
        with pytest.raises(ValueError, match=message):
            sampling.sample(lm, **args)


def test_shipped_model_loads_and_samples():
    lm = load_pretrained()
    assert lm.net.spec.cell == "rnn"  # a plain tanh RNN: no gates
    assert lm.meta["corpus_is_time_machine"] and lm.meta[HELD_OUT_PPL] < 6
    out = sampling.sample(lm, "the time traveller", 100, 0.0)
    assert len(out.text) == 100


def test_shipped_model_perplexity_is_reproduced(corpus_file):
    from core.runs.pretrain import held_out_metrics
    from core.runs.config import TrainConfig
    from core.runs.data import prepare_data
    lm = load_pretrained()
    cfg = TrainConfig.from_dict(lm.meta["config"])
    data = prepare_data(cfg, corpus_file.read_text())
    ppl, bpc = held_out_metrics(lm, data)
    assert ppl == pytest.approx(lm.meta[HELD_OUT_PPL], abs=1e-3)


def test_missing_or_corrupt_asset_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="missing"):
        load_pretrained(tmp_path)
    (tmp_path / "charrnn.json").write_text("{not json")
    (tmp_path / "charrnn.safetensors").write_bytes(b"junk")
    with pytest.raises(ValueError, match="cannot be read"):
        load_pretrained(tmp_path)


@pytest.mark.parametrize("cell, layers, embed", [("rnn", 1, 0), ("rnn", 2, 0), ("rnn", 3, 6), ("scratch", 1, 5), ("gru", 2, 0)])
def test_stepper_matches_the_network(cell, layers, embed):
    torch.manual_seed(1)
    vocab = CharVocab.build("abcdefghij ")
    lm = LanguageModel(RNNLM(ModelSpec(len(vocab), 12, cell, embed, layers)), vocab)
    text = "abc defg hij abc"
    ids = lm.vocab.encode(text)
    with torch.no_grad():
        logits, _ = lm.net(torch.as_tensor(ids)[None])
    ref = torch.log_softmax(logits[0].double(), -1).numpy()
    ours = probe.log_probs(lm, ids)
    np.testing.assert_allclose(ours[1:], ref[np.arange(len(ids) - 1), ids[1:]], atol=1e-5)
    with torch.no_grad():   # the first token, read from the zero state: the output layer applied to zeros
        zero = torch.log_softmax(lm.net.head(torch.zeros(1, lm.net.spec.hidden_size)).double(), -1).numpy()[0]
    np.testing.assert_allclose(ours[0], zero[ids[0]], atol=1e-5)
    at_once, one_by_one = Stepper(lm), Stepper(lm)
    for i in ids:
        last = one_by_one.feed([i])
    after = at_once.feed(ids)
    np.testing.assert_allclose(after, last, atol=1e-5)
    np.testing.assert_array_equal(at_once.feed([]), after)   # reading nothing leaves the state as it was


def test_score_text_sums_the_log_probabilities():
    torch.manual_seed(2)
    vocab = CharVocab.build("abcdefghij ")
    lm = LanguageModel(RNNLM(ModelSpec(len(vocab), 12, "rnn", 0, 2)), vocab)
    scored = probe.score_text(lm, "Abc  Dé j")  # cleaned as the training text: "abc d j"
    assert scored.text == "abc d j"
    logp = probe.log_probs(lm, lm.vocab.encode("abc d j"))
    assert scored.tokens == list(scored.text) and len(scored.bits) == len(scored.text)
    np.testing.assert_allclose(scored.bits, -logp / np.log(2), rtol=1e-12)
    assert scored.bits_per_char == pytest.approx(scored.bits.sum() / len(scored.text))
    assert scored.perplexity == pytest.approx(float(np.exp(-logp.mean())))
    assert all(b > 0 for b in scored.bits)
    empty = probe.score_text(lm, "")
    assert empty.text == "" and len(empty.bits) == 0 and np.isnan(empty.bits_per_char)
    unknown = probe.score_text(lm, "xyz")
    assert unknown.text == "" and unknown.unknown == ["x", "y", "z"]


def test_the_hidden_state_summary_names_only_rows_of_its_chart():
    """Issue 30: the summary once named 'most active units' that were not rows of the heatmap."""
    import json
    import re

    from apptest_util import page
    at = page("sampling").run()
    chart = next(c for c in at.get("plotly_chart") if "activation h" in c.proto.spec)
    rows = set(json.loads(chart.proto.spec)["data"][0]["y"])
    named = re.findall(r"unit (\d+) \((\d+) times?\)", chart.proto.alt)
    assert len(named) == 3 and all(u in rows for u, _ in named)
    counts = [int(n) for _, n in named]
    assert counts == sorted(counts, reverse=True)


def test_the_hidden_state_heatmap_writes_every_character_under_its_column():
    """Issue 30 item 9: only every twentieth character was written. Now each of the 32 columns shown carries its
    character, and the window control moves along the text (its characters, its own rows and summary)."""
    import json

    from apptest_util import page
    views = []
    for start in ("1", "33"):
        at = page("sampling", hidden_from=start).run()
        assert not at.exception
        chart = next(c for c in at.get("plotly_chart") if "activation h" in c.proto.spec)
        spec = json.loads(chart.proto.spec)
        x, ticks = spec["data"][0]["x"], spec["layout"]["xaxis"]
        assert list(x) == list(range(int(start), int(start) + 32))
        assert ticks["tickvals"] == list(x) and len(ticks["ticktext"]) == 32
        assert f"characters {start}-{int(start) + 31}" in chart.proto.alt
        views.append("".join(" " if c == "␣" else c for c in ticks["ticktext"]))
    prefix = "the time traveller "
    assert views[0].startswith(prefix)          # the first window begins with the prefix, character by character
    assert views[0] != views[1]
