"""Counting n-grams of token ids: counts, the most frequent, Zipf's curve, and how much of the space of
possible n-grams a text covers."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.checks import check_int
from core.text.tokens import checked_ids


def ngram_counts(ids, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct n-grams of the id sequence (rows, in descending count order) and their counts."""
    ids = np.asarray(ids, dtype=np.int64).ravel()
    n = check_int("n", n, 1, 10)
    if len(ids) < n:
        return np.zeros((0, n), dtype=np.int64), np.zeros(0, dtype=np.int64)
    windows = np.lib.stride_tricks.sliding_window_view(ids, n)
    base = int(ids.max()) + 1
    if base ** n < 2 ** 62:  # pack each n-gram into one integer: a 1-D unique is much faster
        weights = base ** np.arange(n - 1, -1, -1, dtype=np.int64)
        keys, counts = np.unique(windows @ weights, return_counts=True)
        grams = (keys[:, None] // weights) % base
    else:
        grams, counts = np.unique(windows, axis=0, return_counts=True)
    order = np.lexsort((*grams.T[::-1], -counts))
    return grams[order], counts[order]


def token_counts(ids, vocab_size: int) -> np.ndarray:
    """How often each token id occurs (an entry for every id, zero for those that never do)."""
    return np.bincount(checked_ids(ids, check_int("vocab_size", vocab_size, 1)), minlength=vocab_size)


def top_ngrams(vocab, ids, n: int, k: int = 10) -> list[tuple[str, int]]:
    """The k most frequent n-grams, shown as text."""
    k = check_int("k", k, 1, 10_000)
    grams, counts = ngram_counts(ids, n)
    return [("".join(vocab.token_text(int(i)) for i in g), int(c)) for g, c in zip(grams[:k], counts[:k])]


def zipf_curve(ids, n: int) -> np.ndarray:
    """Counts of the distinct n-grams sorted from most to least frequent (plot against rank 1..)."""
    return ngram_counts(ids, n)[1]


@dataclass(frozen=True)
class Coverage:
    n: int
    distinct: int   # distinct n-grams in the text
    symbols: int    # token types that occur in the text (S): <unk> and unused BPE tokens are not counted
    total: int      # n-gram positions in the text

    @property
    def possible(self) -> int:
        """S^n n-grams could be formed from the token types that occur (a Python int: it can be huge)."""
        return self.symbols ** self.n

    @property
    def share(self) -> float:
        return self.distinct / self.possible


def ngram_coverage(ids, max_n: int = 5) -> list[Coverage]:
    """For n = 1..max_n: distinct n-grams seen against the S^n that the S token types occurring could form."""
    max_n = check_int("max_n", max_n, 1, 10)
    ids = np.asarray(ids, dtype=np.int64).ravel()
    symbols = int(np.unique(ids).size)
    return [Coverage(n, len(ngram_counts(ids, n)[1]), symbols, max(0, len(ids) - n + 1))
            for n in range(1, max_n + 1)]
