"""A counting language model: n-grams with add-alpha (Laplace) smoothing, scored on held-out text.

P(x_t | the previous n-1 tokens) = (count(context, x_t) + alpha) / (count(context) + alpha * S), where S is the
number of token types. alpha = 1 is Laplace smoothing; alpha -> 0 is the raw frequency, which gives an unseen
n-gram probability 0 (infinite perplexity). This is the model the chapter's language-model section starts from,
and what a recurrent network is compared with.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.checks import check_int, check_real

MAX_N = 8


def _codes(ids: np.ndarray, n: int, base: int) -> np.ndarray:
    """Each n-gram of ids as one integer (its tokens as digits in base `base`)."""
    windows = np.lib.stride_tricks.sliding_window_view(ids, n)
    return windows @ (base ** np.arange(n - 1, -1, -1, dtype=np.int64))


def _lookup(table_codes: np.ndarray, table_counts: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """The count of each code in a sorted table (0 for codes not in it)."""
    pos = np.clip(np.searchsorted(table_codes, codes), 0, max(0, len(table_codes) - 1))
    found = table_codes[pos] == codes if len(table_codes) else np.zeros(len(codes), dtype=bool)
    return np.where(found, table_counts[pos] if len(table_counts) else 0, 0)


@dataclass(frozen=True)
class NgramScore:
    n: int
    alpha: float
    cross_entropy: float       # nats per token on the scored text
    seen_share: float          # share of the scored n-grams that occur in the training text

    @property
    def perplexity(self) -> float:
        return math.exp(self.cross_entropy) if self.cross_entropy < 700 else math.inf

    @property
    def bits_per_token(self) -> float:
        return self.cross_entropy / math.log(2)


def score(train_ids, test_ids, n: int, alpha: float, num_types: int) -> NgramScore:
    """Fit add-alpha n-gram counts on train_ids and score every token of test_ids that has n-1 tokens before it
    in test_ids (n = 1: every token)."""
    n = check_int("n", n, 1, MAX_N)
    alpha = check_real("alpha", alpha, 0.0, 1e6)
    S = check_int("number of token types", num_types, 1, 1_000_000)
    train = np.asarray(train_ids, dtype=np.int64).ravel()
    test = np.asarray(test_ids, dtype=np.int64).ravel()
    if len(train) < n or len(test) < n:
        raise ValueError(f"Both texts need at least n = {n} tokens.")
    if train.size and (train.min() < 0 or max(train.max(), test.max()) >= S or test.min() < 0):
        raise ValueError(f"Token ids must lie in 0..{S - 1}.")
    if S ** n > 2**62:
        raise ValueError(f"{S} token types and n = {n} make n-gram codes too large; lower n.")
    grams, gram_counts = np.unique(_codes(train, n, S), return_counts=True)
    test_grams = _codes(test, n, S)
    joint = _lookup(grams, gram_counts, test_grams)
    if n == 1:
        context = np.full(len(test_grams), len(train))
    else:
        # contexts are counted where they are followed by a token in the training text (as the n-grams are)
        ctx, ctx_counts = np.unique(_codes(train[:-1], n - 1, S), return_counts=True)
        context = _lookup(ctx, ctx_counts, test_grams // S)
    with np.errstate(divide="ignore"):
        logp = np.log(joint + alpha) - np.log(context + alpha * S)
    return NgramScore(n, alpha, float(-np.mean(logp)), float(np.mean(joint > 0)))


def sweep(train_ids, test_ids, num_types: int, alpha: float, max_n: int = 6) -> list[dict]:
    """Training and held-out scores for n = 1..max_n: one row per n."""
    max_n = check_int("max_n", max_n, 1, MAX_N)
    rows = []
    for n in range(1, max_n + 1):
        held = score(train_ids, test_ids, n, alpha, num_types)
        fit = score(train_ids, train_ids, n, alpha, num_types)
        rows.append({"n": n, "train_ppl": fit.perplexity, "heldout_ppl": held.perplexity,
                     "heldout_bits": held.bits_per_token, "seen_share": held.seen_share})
    return rows
