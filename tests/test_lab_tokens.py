"""Text to tokens (core.labs.tokens): the rules its claims are checked by over every control's range
(tests/test_claims_sweep.py walks each control and the NAMED settings with them, on The Time Machine): Zipf's line by
numpy's least squares, the n-gram coverage counted with a set, the counting models against the RNN from their rows,
and the parameter calculator's largest terms from the counts."""
from __future__ import annotations

import functools

import numpy as np
import pytest

from core.claims import Claim

NAMED = [dict(tokenizer="bpe", bpe_size=size) for size in (256, 1024, 4096)] + \
    [dict(tokenizer=kind, cleaning="punctuation") for kind in ("char", "word", "bpe")] + \
    [dict(V=2, k=1, h=1, d=0), dict(V=1_000_000, k=100, h=1, d=0), dict(V=28, h=512, d=0)]


def zipf_straight(curves) -> tuple[bool, float]:
    """Whether a least-squares line (numpy's lstsq) explains 95% of log count's variance over the first 1,000
    ranks of the 1-grams, and its exponent."""
    counts = np.asarray(curves[0][:min(len(curves[0]), 1000)], dtype=float)
    X = np.column_stack([np.log(np.arange(1, len(counts) + 1)), np.ones(len(counts))])
    coef, *_ = np.linalg.lstsq(X, np.log(counts), rcond=None)
    r2 = 1 - np.var(np.log(counts) - X @ coef) / np.var(np.log(counts))
    return r2 >= 0.95, float(-coef[0])


@functools.lru_cache(maxsize=8)
def coverage_share(ids: tuple, n: int = 5) -> tuple[float, float]:
    """The share of the possible n-grams the text shows, and how often each one seen is seen, counted with a set."""
    ids = np.asarray(ids)
    grams = {tuple(ids[i:i + n]) for i in range(len(ids) - n + 1)}
    return len(grams) / len(set(ids.tolist())) ** n, (len(ids) - n + 1) / len(grams)


def holds(c: Claim, r) -> bool:
    curves = r.statistics.curves
    share, each = coverage_share(tuple(r.ids))
    rows, rnn = (r.comparison.rows, r.comparison.model_ppl) if r.comparison else ([], np.nan)
    held, train = [x["heldout_ppl"] for x in rows], [x["train_ppl"] for x in rows]
    terms = sorted(r.calculator.terms.values(), reverse=True)
    h = r.calculator.h
    rules = {
        "zipf.straight": lambda: zipf_straight(curves)[0] and f"α = {zipf_straight(curves)[1]:.2f}" in c.text,
        "zipf.not_straight": lambda: len(curves[0]) >= 2 and not zipf_straight(curves)[0],
        "zipf.too_few": lambda: len(curves[0]) < 3,
        "ngrams.most_unseen": lambda: share < 0.5 and f"each seen {each:.1f} times" in c.text,
        "ngrams.mostly_seen": lambda: share >= 0.5 and f"each seen {each:.1f} times" in c.text,
        "ngram_lm.turns_up": lambda: int(np.argmin(held)) < len(held) - 1 and held[-1] > min(held),
        "ngram_lm.best_last": lambda: int(np.argmin(held)) == len(held) - 1,
        "ngram_lm.train_falls": lambda: bool(np.all(np.diff(train) <= 0)),
        "ngram_lm.train_not_falling": lambda: bool(np.any(np.diff(train) > 0)),
        "ngram_lm.rnn_better": lambda: rnn < min(held),
        "ngram_lm.rnn_not_better": lambda: rnn >= min(held),
        "params.hh_large": lambda: h * h >= terms[1],
        "params.hh_small": lambda: h * h < terms[1],
    }
    return rules[c.kind]()


def complete(claims: list[Claim], r) -> None:
    """Zipf's reading, the coverage, the counting model and the calculator are each said."""
    said = {c.kind.split(".")[0] for c in claims}
    assert said == {"zipf", "ngrams", "ngram_lm", "params"}, said


@pytest.mark.usefixtures("corpus_file")
def test_a_planted_claim_fails_the_rules():
    from core.labs import tokens as lab
    r = lab.compute(lab.Settings())
    kinds = {c.kind for c in lab.readings(r)}
    assert "ngrams.most_unseen" in kinds
    for wrong in ("ngrams.mostly_seen", "params.hh_large" if "params.hh_small" in kinds else "params.hh_small",
                  "ngram_lm.rnn_not_better" if "ngram_lm.rnn_better" in kinds else "ngram_lm.rnn_better"):
        assert not holds(Claim("each seen 0.0 times", wrong), r), wrong
    with pytest.raises(KeyError):
        holds(Claim("new", "ngrams.new_kind"), r)
