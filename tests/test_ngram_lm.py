"""core.text.ngram_lm: add-alpha n-gram language models, checked by hand on tiny texts."""
import math

import numpy as np
import pytest

from core.assets import HELD_OUT_PPL
from core.nn import probe
from core.text import ngram_lm


def test_bigram_probabilities_by_hand():
    # train "aab" as ids a=0 b=1 (S = 2): bigrams aa, ab; contexts followed by a token: a (twice)
    train = np.array([0, 0, 1])
    test = np.array([0, 1, 1])          # bigrams ab (count 1), bb (count 0)
    s = ngram_lm.score(train, test, 2, alpha=1.0, num_types=2)
    p_ab = (1 + 1) / (2 + 2)            # count(a,b) + 1 over count(a) + S
    p_bb = (0 + 1) / (0 + 2)            # b never starts a bigram in training: uniform
    assert s.cross_entropy == pytest.approx(-(math.log(p_ab) + math.log(p_bb)) / 2)
    assert s.seen_share == 0.5 and s.perplexity == pytest.approx(math.exp(s.cross_entropy))


def test_unigram_and_zero_alpha():
    train, test = np.array([0, 0, 0, 1]), np.array([0, 1])
    s = ngram_lm.score(train, test, 1, alpha=0.0, num_types=3)
    assert s.cross_entropy == pytest.approx(-(math.log(3 / 4) + math.log(1 / 4)) / 2)
    unseen = ngram_lm.score(train, np.array([2, 2]), 1, alpha=0.0, num_types=3)
    assert unseen.perplexity == math.inf            # raw counts give an unseen token probability zero
    smoothed = ngram_lm.score(train, np.array([2, 2]), 1, alpha=1.0, num_types=3)
    assert smoothed.cross_entropy == pytest.approx(-math.log(1 / 7))


def test_probabilities_sum_to_one_for_every_context():
    rng = np.random.default_rng(0)
    train = rng.integers(0, 4, 300)
    for ctx in range(4):
        total = 0.0
        for nxt in range(4):
            total += math.exp(-ngram_lm.score(train, np.array([ctx, nxt]), 2, 0.5, 4).cross_entropy)
        assert total == pytest.approx(1.0)


def test_the_table_memorises_and_stops_generalising():
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 6, 3000)
    rows = ngram_lm.sweep(ids[:2700], ids[2700:], 6, 0.01, 5)
    train = [r["train_ppl"] for r in rows]
    held = [r["heldout_ppl"] for r in rows]
    assert train == sorted(train, reverse=True)       # longer contexts fit their own text better ...
    assert held[-1] > held[0]                          # ... and random text has nothing to generalise


def test_bad_input():
    with pytest.raises(ValueError, match="n"):
        ngram_lm.score([0, 1], [0, 1], 0, 1.0, 2)
    with pytest.raises(ValueError, match="0..1"):
        ngram_lm.score([0, 5], [0, 1], 1, 1.0, 2)
    with pytest.raises(ValueError, match="at least"):
        ngram_lm.score([0], [0, 1], 3, 1.0, 2)
    with pytest.raises(ValueError, match="alpha"):
        ngram_lm.score([0, 1], [0, 1], 1, -1.0, 2)


def test_the_comparison_on_the_corpus(corpus_file):
    from core.runs.saved import load_pretrained
    lm = load_pretrained()
    c = probe.compare_with_model(lm, corpus_file.read_text(encoding="utf-8"), 0.1)
    assert c.model_ppl == pytest.approx(lm.meta[HELD_OUT_PPL], rel=1e-3)   # the same held-out tenth as pretrain
    assert c.best["n"] in (4, 5) and c.model_ppl < c.best["heldout_ppl"] < 5.5
    assert c.rows[-1]["heldout_ppl"] > c.best["heldout_ppl"]


def test_a_long_text_is_compared_on_its_first_part_and_says_so():
    import torch

    from core.nn.models import ModelSpec, RNNLM
    from core.nn.sampling import LanguageModel
    from core.text.tokens import CharVocab
    torch.manual_seed(0)
    vocab = CharVocab.build("abcdefgh ")
    lm = LanguageModel(RNNLM(ModelSpec(len(vocab), 8, "rnn")), vocab)
    text = "abc defg hab cde " * 200                       # 3,400 characters
    c = probe.compare_with_model(lm, text, 0.1, max_chars=2_000)
    assert (c.used_chars, c.total_chars) == (2_000, 3_400) and c.held_out_chars == 200
    whole = probe.compare_with_model(lm, text, 0.1)
    assert whole.used_chars == whole.total_chars == 3_400


def test_the_rnns_score_is_computed_once_per_text_whatever_alpha(corpus_file):
    """Moving Text to tokens' alpha recomputes the n-gram tables only: the RNN's held-out perplexity (seconds on
    the corpus) is its own function of the text, and handing it in gives the comparison computed whole."""
    from core.runs.saved import load_pretrained
    lm = load_pretrained()
    text = corpus_file.read_text(encoding="utf-8")[:60_000]
    whole = probe.compare_with_model(lm, text, 0.5)
    ppl = probe.model_perplexity(lm, text)
    assert ppl == whole.model_ppl
    assert probe.compare_with_model(lm, text, 0.5, model_ppl=ppl) == whole
    for bad in (0.5, float("nan"), "3"):
        with pytest.raises(ValueError, match="model_ppl"):
            probe.compare_with_model(lm, text, 0.5, model_ppl=bad)
