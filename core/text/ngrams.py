"""Counting n-grams of token ids: counts, the most frequent, Zipf's curve, and how much of the space of
possible n-grams a text covers."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.claims import Claim, claim
from core.i18n import N_, _
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


@dataclass(frozen=True)
class ZipfFit:
    """Zipf's law n_i ≈ C / i^α fitted by least squares to log count against log rank over ranks first..last."""
    alpha: float
    log_c: float
    r2: float           # the share of log count's variance the straight line explains
    first: int
    last: int

    def counts(self, ranks) -> np.ndarray:
        return np.exp(self.log_c) * np.asarray(ranks, dtype=np.float64) ** -self.alpha


STRAIGHT = 0.95        # a fit explaining at least this share of the variance: "close to a straight line"
FIT_RANKS = 1000       # fitted over the first ranks only: the long tail of counts 1 and 2 is a staircase


def zipf_fit(curve, first: int = 1, last: int | None = None) -> ZipfFit:
    counts = np.asarray(curve, dtype=np.float64).ravel()
    last = min(len(counts), FIT_RANKS) if last is None else last
    first, last = check_int("first rank", first, 1), check_int("last rank", last, 1)
    if last - first < 1 or last > len(counts):
        raise ValueError(f"Fit Zipf's law over at least two ranks within 1..{len(counts)}.")
    x, y = np.log(np.arange(first, last + 1, dtype=np.float64)), np.log(counts[first - 1:last])
    slope, intercept = np.polyfit(x, y, 1)
    residual = y - (slope * x + intercept)
    r2 = 1.0 - float(residual.var() / y.var()) if y.var() > 0 else 1.0
    return ZipfFit(float(-slope), float(intercept), r2, first, last)


# Zipf's reading, one whole sentence per tokenizer (characters, words, BPE tokens) and case, for the catalog
ZIPF_STRAIGHT = {
    "char": N_("Counted as characters, frequency against rank falls close to a straight line on log-log axes (Zipf's "
               "law, n_i ∝ 1/i^α): α = {alpha:.2f} for single characters over ranks 1 to {last} (the line explains "
               "{r2:.1f}% of the variance of log count)."),
    "word": N_("Counted as words, frequency against rank falls close to a straight line on log-log axes (Zipf's law, "
               "n_i ∝ 1/i^α): α = {alpha:.2f} for single words over ranks 1 to {last} (the line explains {r2:.1f}% of "
               "the variance of log count)."),
    "bpe": N_("Counted as BPE tokens, frequency against rank falls close to a straight line on log-log axes (Zipf's "
              "law, n_i ∝ 1/i^α): α = {alpha:.2f} for single BPE tokens over ranks 1 to {last} (the line explains "
              "{r2:.1f}% of the variance of log count).")}
ZIPF_STRAIGHT_MORE = {
    "char": N_("Counted as characters, frequency against rank falls close to a straight line on log-log axes (Zipf's "
               "law, n_i ∝ 1/i^α): α = {alpha:.2f} for single characters over ranks 1 to {last} (the line explains "
               "{r2:.1f}% of the variance of log count); {rest}."),
    "word": N_("Counted as words, frequency against rank falls close to a straight line on log-log axes (Zipf's law, "
               "n_i ∝ 1/i^α): α = {alpha:.2f} for single words over ranks 1 to {last} (the line explains {r2:.1f}% of "
               "the variance of log count); {rest}."),
    "bpe": N_("Counted as BPE tokens, frequency against rank falls close to a straight line on log-log axes (Zipf's "
              "law, n_i ∝ 1/i^α): α = {alpha:.2f} for single BPE tokens over ranks 1 to {last} (the line explains "
              "{r2:.1f}% of the variance of log count); {rest}.")}
ZIPF_TOO_FEW = {"char": N_("Counted as characters, there are too few types to fit Zipf's law."),
                "word": N_("Counted as words, there are too few types to fit Zipf's law."),
                "bpe": N_("Counted as BPE tokens, there are too few types to fit Zipf's law.")}
ZIPF_FEW = {
    "char": N_("Counted as characters, there are only {types} types, too few for Zipf's straight line (a line explains "
               "{r2:.0f}% of log count's variance). The book's Zipf plot counts words: choose the word tokenizer to "
               "see it."),
    "word": N_("Counted as words, there are only {types} types, too few for Zipf's straight line (a line explains "
               "{r2:.0f}% of log count's variance). The book's Zipf plot counts words: choose the word tokenizer to "
               "see it."),
    "bpe": N_("Counted as BPE tokens, there are only {types} types, too few for Zipf's straight line (a line explains "
              "{r2:.0f}% of log count's variance). The book's Zipf plot counts words: choose the word tokenizer to "
              "see it.")}
ZIPF_BENDS = {
    "char": N_("Counted as characters, frequency against rank bends away from a straight line over its {types} types "
               "(a line explains {r2:.0f}% of log count's variance). The book's Zipf plot counts words: choose the "
               "word tokenizer to see it."),
    "word": N_("Counted as words, frequency against rank bends away from a straight line over its {types} types (a "
               "line explains {r2:.0f}% of log count's variance). The book's Zipf plot counts words: choose the word "
               "tokenizer to see it."),
    "bpe": N_("Counted as BPE tokens, frequency against rank bends away from a straight line over its {types} types (a "
              "line explains {r2:.0f}% of log count's variance). The book's Zipf plot counts words: choose the word "
              "tokenizer to see it.")}


def _by_kind(texts: dict, kind: str) -> str:
    return texts.get(kind, texts["bpe"])


def zipf_reading(curves: list, kind: str) -> Claim:
    """What the frequency-against-rank curves of 1-, 2- and 3-grams show: Zipf's straight line (with its fitted
    exponents) when the 1-gram curve is close to one, else that there are too few token types for it."""
    fits = [zipf_fit(c) if len(c) >= 2 else None for c in curves]
    one = fits[0]
    numbers = {"alphas": [f.alpha if f else None for f in fits], "r2": [f.r2 if f else None for f in fits]}
    if one is not None and one.r2 >= STRAIGHT:
        more = [(n, f.alpha) for n, f in zip((2, 3), fits[1:]) if f and f.r2 >= STRAIGHT]
        rest = _("; ").join(_("{n}-grams α = {alpha:.2f}").format(n=n, alpha=a) for n, a in more)
        text = _by_kind(ZIPF_STRAIGHT, kind) if not more else _by_kind(ZIPF_STRAIGHT_MORE, kind)
        return claim("zipf.straight", _(text).format(alpha=one.alpha, last=one.last, r2=100 * one.r2, rest=rest),
                     **numbers)
    types = len(curves[0])
    if one is None:
        return claim("zipf.too_few", _(_by_kind(ZIPF_TOO_FEW, kind)), **numbers)
    text = _by_kind(ZIPF_FEW, kind) if types < 100 else _by_kind(ZIPF_BENDS, kind)
    return claim("zipf.not_straight", _(text).format(types=types, r2=100 * one.r2), **numbers)
