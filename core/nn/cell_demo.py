"""What the RNN cell lab steps through: a small random tanh RNN reading one word, letter by letter, and the
two ways of computing a pre-activation. Everything here is core.nn.rnn_ref's reference model."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.nn import rnn_ref
from core.checks import check_int
from core.text.tokens import UNK, CharVocab

MAX_WORD = 24


@dataclass
class Step:
    """What the network sees and says at time step t (1-based)."""
    t: int
    read: str              # the letter read
    target: str            # the letter that really comes next
    X: np.ndarray          # one-hot input (1, V)
    H_prev: np.ndarray     # (1, h)
    H: np.ndarray          # (1, h)
    P: np.ndarray          # next-letter probabilities (V,)
    target_id: int
    loss: float            # -log P[target]


@dataclass
class WordRun:
    word: str
    vocab: CharVocab
    params: dict
    x_ids: np.ndarray      # (1, steps)
    y_ids: np.ndarray
    cache: rnn_ref.ForwardCache

    @property
    def steps(self) -> int:
        return int(self.x_ids.shape[1])

    def step(self, t: int) -> Step:
        t = check_int("time step t", t, 1, self.steps)
        P = self.cache.P[t - 1][0]
        target = int(self.y_ids[0, t - 1])
        return Step(t, self.word[t - 1], self.word[t], self.cache.X[t - 1], self.cache.H[t - 1], self.cache.H[t],
                    P, target, float(-np.log(P[target])))


def read_word(word: str, hidden: int, seed: int = 0) -> WordRun:
    """A random one-layer tanh RNN over the word's own letters, reading the word to predict each next letter."""
    if not isinstance(word, str):
        raise ValueError("The word must be text.")
    word = word.strip().lower()
    if len(word) < 2:
        raise ValueError("Type a word of at least two letters: the network reads one and predicts the next.")
    if len(word) > MAX_WORD:
        raise ValueError(f"Keep the word to {MAX_WORD} letters or fewer.")
    vocab = CharVocab([UNK] + sorted(set(word)))
    ids = vocab.encode(word)
    params = rnn_ref.init_params(len(vocab), check_int("hidden units", hidden, 1, 64), None, seed=seed, scale=1.0)
    x_ids, y_ids = ids[None, :-1], ids[None, 1:]
    return WordRun(word, vocab, params, x_ids, y_ids, rnn_ref.forward(params, x_ids, y_ids))


def concat_example(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random matrices of the book's shapes (X 3x1, W_xh 1x4, H 3x4, W_hh 4x4): the pre-activation computed
    with two products and with one product of the concatenations."""
    rng = np.random.default_rng(check_int("seed", seed, 0))
    X, W_xh, H, W_hh = (rng.standard_normal(shape) for shape in ((3, 1), (1, 4), (3, 4), (4, 4)))
    return rnn_ref.two_products_or_one(X, W_xh, H, W_hh)


@dataclass
class Lookup:
    """One input step done two ways: the one-hot row times W_xh, and simply row `token_id` of W_xh."""
    token_id: int
    product: np.ndarray    # X_t W_xh, with X_t the one-hot row (1 x V)
    row: np.ndarray        # W_xh[token_id]

    @property
    def difference(self) -> float:
        return float(np.max(np.abs(self.product - self.row)))


def one_hot_lookup(run: WordRun, t: int) -> Lookup:
    """At step t, X_t W_xh computed as a matrix product and as a row lookup (they are equal exactly)."""
    step = run.step(t)
    token = int(run.x_ids[0, t - 1])
    return Lookup(token, (step.X @ run.params["W_xh"])[0], run.params["W_xh"][token].copy())
