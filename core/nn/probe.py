"""What a trained language model says about a text: its next-token logits, the log-probability of every token,
a text's score in bits per character, the hidden states it goes through (and which units switch), and how it
compares with counting n-gram models on the same held-out text."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from core.checks import check_int, check_real
from core.nn.models import stream_cross_entropy
from core.nn.sampling import LanguageModel, Stepper
from core.text.corpus import clean
from core.text.ngram_lm import sweep


def next_logits(lm: LanguageModel, prefix: str) -> np.ndarray:
    """The model's logits for the token after prefix (turn them into probabilities with distribution)."""
    cleaned, _ = lm.prepare_prefix(prefix)
    return Stepper(lm).read(cleaned)


def log_probs(lm: LanguageModel, ids) -> np.ndarray:
    """log p(token_t | tokens before it) for every token id, the first from the zero state."""
    out = np.empty(len(ids))
    if len(ids) == 0:
        return out
    stepper = Stepper(lm)
    logits = stepper.feed([])   # before any token: from the zero state
    for t, i in enumerate(ids):
        z = logits - logits.max()
        out[t] = z[i] - math.log(np.exp(z).sum())
        logits = stepper.feed([i])
    return out


@dataclass
class Score:
    """How surprised a model is by a text: per token, -log2 p(token | the tokens before it)."""

    text: str                 # the text as the model reads it (cleaned, unknown characters dropped)
    tokens: list[str]         # the text of each token
    bits: np.ndarray          # surprisal of each token in bits; the first is read from the zero state
    unknown: list[str]        # characters the model does not know (dropped)

    @property
    def bits_per_char(self) -> float:
        return float(self.bits.sum() / len(self.text)) if self.text else math.nan

    @property
    def perplexity(self) -> float:
        """Per token: 2 to the mean surprisal."""
        return float(2.0 ** self.bits.mean()) if len(self.bits) else math.nan


def score_text(lm: LanguageModel, text: str) -> Score:
    """Score a text under the model: the surprisal of every token given all before it."""
    cleaned, unknown = lm.prepare_prefix(text)
    ids = lm.vocab.encode(cleaned)
    return Score(cleaned, [lm.vocab.token_text(int(i)) for i in ids], -log_probs(lm, ids) / math.log(2), unknown)


def hidden_states(lm: LanguageModel, text: str) -> np.ndarray:
    """The hidden state after each token of the (cleaned) text: shape (tokens, hidden units)."""
    cleaned, _ = lm.prepare_prefix(text)
    ids = lm.vocab.encode(cleaned)
    if len(ids) == 0:
        return np.zeros((0, lm.net.spec.hidden_size))
    stepper = Stepper(lm)
    stepper.hidden_history = []
    stepper.feed(ids)
    return np.asarray(stepper.hidden_history)


def distinct_ngram_share(text: str, n: int = 3) -> float:
    """Share of the text's n-grams that are distinct: low values mean the text repeats itself."""
    n = check_int("n", n, 1, 20)
    grams = [text[i:i + n] for i in range(len(text) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 1.0


def most_variable_units(H: np.ndarray, k: int) -> np.ndarray:
    """The k hidden units (columns of H) whose activation varies most along the text, most variable first."""
    return np.argsort(-np.asarray(H).std(axis=0))[:check_int("k", k, 1)]


def order_by_first_flip(H: np.ndarray, units: np.ndarray) -> np.ndarray:
    """The units reordered by the position of their first large jump (a change of more than 1 between two
    characters), units that never jump last: neighbouring rows then switch at nearby characters."""
    H = np.asarray(H)
    units = np.asarray(units)
    jumps = np.abs(np.diff(H[:, units], axis=0)) > 1.0
    first = np.where(jumps.any(axis=0), jumps.argmax(axis=0), len(H))
    return units[np.argsort(first, kind="stable")]


def most_switching_units(H: np.ndarray, units, k: int) -> list[tuple[int, int]]:
    """Among the given units, the k that switch most often (a change of more than 1 between two characters), with
    how many times each switches."""
    H, units = np.asarray(H), np.asarray(units)
    switches = (np.abs(np.diff(H[:, units], axis=0)) > 1.0).sum(axis=0)
    order = np.argsort(-switches, kind="stable")[:check_int("k", k, 1)]
    return [(int(units[i]), int(switches[i])) for i in order]


@dataclass
class Comparison:
    """n-gram models (n = 1..max_n) and a trained language model scored on the same held-out text."""
    rows: list[dict]
    model_ppl: float            # the language model's held-out perplexity, state carried through the text
    held_out_chars: int
    num_types: int
    used_chars: int = 0         # how much of the cleaned text was split and scored
    total_chars: int = 0        # how long the cleaned text was (longer than used_chars when it was cut)

    @property
    def best(self) -> dict:
        return min(self.rows, key=lambda r: r["heldout_ppl"])


MAX_COMPARED_CHARS = 500_000   # a long upload is compared on its first half million characters: seconds, not minutes


def held_out_split(lm, text: str, held_out: float = 0.1, max_chars: int = MAX_COMPARED_CHARS,
                   max_n: int = 6) -> tuple[np.ndarray, int, int, int]:
    """The text cleaned as lm's training text, at most its first max_chars characters, as lm's token ids; where
    the held-out last part starts; the characters used; and how long the cleaned text was before it was cut."""
    text = clean(text, lm.cleaning)
    total = len(text)
    text = text[: check_int("max_chars", max_chars, 1_000)]
    ids = np.asarray(lm.vocab.encode(text), dtype=np.int64)
    cut = int(len(ids) * (1 - check_real("held_out", held_out, 0.01, 0.5)))
    if cut < max_n or len(ids) - cut < max_n + 1:
        raise ValueError("The text is too short to hold out a tenth of it: use a longer text.")
    return ids, cut, len(text), total


def model_perplexity(lm, text: str, held_out: float = 0.1, max_chars: int = MAX_COMPARED_CHARS) -> float:
    """lm's perplexity on the held-out last part of the text (held_out_split), its state carried through it. It
    depends on the text only, not on the n-gram models' alpha: a page computes it once per text."""
    ids, cut, _, _ = held_out_split(lm, text, held_out, max_chars)
    return _perplexity_on(lm, ids[cut:])


def _perplexity_on(lm, ids: np.ndarray) -> float:
    nats, count = stream_cross_entropy(lm.net, torch.as_tensor(ids), lm.device, streams=1, chunk=512)
    return math.exp(nats / count)


def compare_with_model(lm, text: str, alpha: float, max_n: int = 6, held_out: float = 0.1,
                       max_chars: int = MAX_COMPARED_CHARS, model_ppl: float | None = None) -> Comparison:
    """Split the text (held_out_split: the first 90% and the last 10%), fit the n-gram models on the first part
    with lm's own vocabulary, and score them and lm on the last part. model_ppl: lm's score on that part when the
    caller has it already (model_perplexity with the same text, held_out and max_chars)."""
    ids, cut, used, total = held_out_split(lm, text, held_out, max_chars, max_n)
    rows = sweep(ids[:cut], ids[cut:], len(lm.vocab), alpha, max_n)
    model_ppl = _perplexity_on(lm, ids[cut:]) if model_ppl is None else check_real("model_ppl", model_ppl, 1.0)
    return Comparison(rows, model_ppl, len(ids) - cut, len(lm.vocab), used, total)
