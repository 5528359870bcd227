"""Generating text from a trained language model, and looking at what it predicts.

The model reads the prefix once to warm up its state, then produces one token at a time, feeding each
choice back in. Only the state is carried, so cost per token is constant and memory does not grow.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import numpy as np
import torch

from core.checks import check_int, check_real
from core.claims import Claim, claim
from core.i18n import _
from core.text.corpus import clean
from core.nn.models import RNNLM

MAX_PREFIX = 2000
MAX_LENGTH = 100_000


@dataclass(frozen=True)
class FastWeights:
    """A tanh RNN's weights as numpy arrays for sampling one token at a time (LanguageModel.fast_weights)."""
    inputs: np.ndarray     # per token: its row of W_xh (through the embedding, if any) plus b_h
    W_hh: np.ndarray       # the first layer's recurrent weights
    upper: list            # layers above the first: ([W_xh; W_hh], b_h) each, one product per step
    W_hq: np.ndarray       # the output layer, transposed: state @ W_hq + b_q
    b_q: np.ndarray


@dataclass
class LanguageModel:
    """A trained network together with its vocabulary and the cleaning its training text went through."""

    net: RNNLM
    vocab: object
    cleaning: str = "letters"
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        self.net.eval()
        self._fast = None
        self._fast_version = None
        self.uid = uuid.uuid4().hex   # names this model in caches for as long as it lives (ids are reused)

    @property
    def device(self) -> torch.device:
        return next(self.net.parameters()).device

    def prepare_prefix(self, prefix: str) -> tuple[str, list[str]]:
        """The prefix cleaned as the training text was, and the characters the model does not know."""
        if not isinstance(prefix, str):
            raise ValueError(_("The prefix must be text."))
        if len(prefix) > MAX_PREFIX:
            raise ValueError(_("The prefix is {n} characters long; keep it under {most}.").format(
                n=len(prefix), most=MAX_PREFIX))
        cleaned = clean(prefix, self.cleaning) if prefix else ""
        unknown = self.vocab.unknown(cleaned)
        if unknown:
            cleaned = "".join(c for c in cleaned if c not in set(unknown))
        return cleaned, unknown

    # A numpy fast path for tanh RNNs (any number of layers): one token at a time, no framework overhead.
    def fast_weights(self) -> FastWeights | None:
        version = tuple(p._version for p in self.net.parameters())  # bumped by every in-place update
        if self._fast is None or self._fast_version != version:
            self._fast_version = version
            spec = self.net.spec
            if self.net.cell.tanh_layout is not None:
                # float32, the training precision: half the memory traffic per step of float64
                g = lambda t: t.detach().cpu().float().numpy()  # noqa: E731
                with torch.no_grad():
                    layers = [{k: g(v) for k, v in layer.items()} for layer in self.net.tanh_layers()]
                first = layers[0]
                inputs = g(self.net.embedding.weight) @ first["W_xh"] if spec.embed_dim else first["W_xh"]
                # layer k > 0: h_k = tanh([h_{k-1}, h_k] @ [W_xh; W_hh] + b), one product per layer
                upper = [(np.ascontiguousarray(np.concatenate([L["W_xh"], L["W_hh"]])), L["b_h"]) for L in layers[1:]]
                self._fast = FastWeights(np.ascontiguousarray(inputs + first["b_h"]),
                                         np.ascontiguousarray(first["W_hh"]), upper,
                                         np.ascontiguousarray(g(self.net.head.weight).T), g(self.net.head.bias))
            else:
                self._fast = None
        return self._fast


class Stepper:
    """Feeds tokens one by one and returns next-token logits (numpy float64), carrying only the state."""

    def __init__(self, lm: LanguageModel):
        self.lm = lm
        self.fast = lm.fast_weights()
        self.state = None
        spec = lm.net.spec
        self.hs = [np.zeros(spec.hidden_size, dtype=np.float32) for _layer in range(spec.num_layers)] if self.fast else None
        # the other cells: the top layer's output after the last token read (the zero state before any)
        self.top = None if self.fast else torch.zeros(1, spec.hidden_size, device=lm.device,
                                                      dtype=lm.net.head.weight.dtype)
        self.hidden_history: list[np.ndarray] | None = None

    def feed(self, ids) -> np.ndarray:
        """Read these tokens (none at all is allowed) and return the logits for the token after them: after every
        token read so far, or from the zero state before any."""
        ids = [int(i) for i in np.asarray(ids).ravel()]
        if self.fast:
            f, hs = self.fast, self.hs
            for i in ids:
                hs[0] = np.tanh(f.inputs[i] + hs[0] @ f.W_hh)
                for k, (W_k, b_k) in enumerate(f.upper, start=1):
                    hs[k] = np.tanh(np.concatenate((hs[k - 1], hs[k])) @ W_k + b_k)
                if self.hidden_history is not None:
                    self.hidden_history.append(hs[-1])
            return (hs[-1] @ f.W_hq + f.b_q).astype(np.float64)
        with torch.no_grad():
            if ids:
                x = torch.tensor([ids], device=self.lm.device)
                outputs, self.state = self.lm.net.hidden_states(x, self.state)
                if self.hidden_history is not None:
                    self.hidden_history.extend(outputs[0].double().cpu().numpy())
                self.top = outputs[:, -1]
            return self.lm.net.head(self.top).double().cpu().numpy()[0]

    def read(self, cleaned: str) -> np.ndarray:
        """Logits after reading a cleaned prefix (from the zero state when it is empty)."""
        return self.feed(self.lm.vocab.encode(cleaned))


def _softmax(logits: np.ndarray, temperature: float) -> np.ndarray:
    z = logits if temperature == 1.0 else logits / temperature
    e = np.exp(z - z.max())
    return e / e.sum()


def _probabilities(logits: np.ndarray, temperature: float, top_k: int | None, top_p: float | None) -> np.ndarray:
    """distribution() without its checks (for callers that checked their arguments once)."""
    V = logits.size
    if temperature == 0.0:
        p = np.zeros(V)
        p[int(np.argmax(logits))] = 1.0
        return p
    p = _softmax(logits, temperature)
    if top_k is not None and top_k < V:
        keep = np.zeros(V, dtype=bool)
        keep[np.argpartition(-p, top_k - 1)[:top_k]] = True
        p = np.where(keep, p, 0.0)
        p /= p.sum()
    if top_p is not None:
        order = np.argsort(-p, kind="stable")
        n_keep = int(np.searchsorted(np.cumsum(p[order]), top_p - 1e-12) + 1)
        keep = np.zeros(V, dtype=bool)
        keep[order[:n_keep]] = True
        p = np.where(keep, p, 0.0)
        p /= p.sum()
    return p


def _check_filters(V: int, temperature, top_k, top_p) -> tuple[float, int | None, float | None]:
    """temperature, top_k and top_p checked and converted, once per call."""
    if top_k is not None:
        top_k = check_int("top_k", top_k, 1, V, what=f"the model has {V} tokens")
    if top_p is not None:
        top_p = check_real("top_p", top_p, 0.0, 1.0, lo_open=True)
    return check_real("temperature", temperature, 0.0, 100.0), top_k, top_p


def distribution(logits: np.ndarray, temperature: float = 1.0, top_k: int | None = None,
                 top_p: float | None = None) -> np.ndarray:
    """Next-token probabilities: softmax(logits / T), then optionally only the top-k tokens or the smallest
    set whose probability reaches top_p, renormalised. T = 0 puts all mass on the argmax (greedy)."""
    logits = np.asarray(logits, dtype=np.float64)
    if logits.ndim != 1 or logits.size < 1 or not np.all(np.isfinite(logits)):
        raise ValueError("logits must be a finite 1-D array.")
    return _probabilities(logits, *_check_filters(logits.size, temperature, top_k, top_p))


def sampler_distribution(lm: LanguageModel, logits: np.ndarray, temperature: float = 1.0, top_k: int | None = None,
                         top_p: float | None = None) -> np.ndarray:
    """The distribution stream() draws the next token from after these logits: distribution() (temperature, top-k,
    top-p) and the sampler's own rule for a character model, which never emits <unk> (its share goes to the other
    tokens); at T = 0, all of it on the likeliest token the sampler may emit."""
    logits = np.asarray(logits, dtype=np.float64)
    p = distribution(logits, temperature, top_k, top_p)
    V = logits.size
    if getattr(lm.vocab, "kind", "") != "char" or V < 2:
        return p
    best = int(np.argmax(logits[1:])) + 1
    if temperature == 0.0 or p[1:].sum() == 0:
        out = np.zeros(V)
        out[best] = 1.0
        return out
    p = p.copy()
    p[0] = 0.0
    return p / p.sum()


def entropy_bits(p: np.ndarray) -> float:
    p = np.asarray(p, dtype=np.float64)
    nz = p[p > 0]
    return max(0.0, float(-(nz * np.log2(nz)).sum()))    # never -0.0 for a certain outcome


@dataclass
class Sample:
    prefix: str                 # the prefix as the model read it (cleaned)
    unknown: list[str]          # prefix characters the model does not know (dropped)
    text: str                   # the generated continuation
    token_ids: list[int]
    token_texts: list[str]
    probabilities: list[float]  # probability of each generated token under the untempered model

    @property
    def surprisal_bits(self) -> np.ndarray:
        """-log2 p of each generated token under the untempered model."""
        return -np.log2(np.clip(np.asarray(self.probabilities, dtype=np.float64), 1e-12, 1.0))


def stream(lm: LanguageModel, prefix: str, temperature: float = 1.0, top_k: int | None = None,
           top_p: float | None = None, seed: int | None = None):
    """An endless generator of (token id, probability under the untempered model) after prefix.
    Only the recurrent state is carried between tokens: memory stays constant however long it runs."""
    return _draws(lm, lm.prepare_prefix(prefix)[0], temperature, top_k, top_p, seed)


def _draws(lm: LanguageModel, cleaned: str, temperature: float, top_k: int | None, top_p: float | None,
           seed: int | None):
    """stream's tokens after a prefix already prepared (LanguageModel.prepare_prefix)."""
    V = len(lm.vocab)
    temperature, top_k, top_p = _check_filters(V, temperature, top_k, top_p)
    rng = np.random.default_rng(None if seed is None else check_int("seed", seed, 0))
    stepper = Stepper(lm)
    reading = lm.vocab.encode(cleaned)   # what the model reads next: the prefix, then each token drawn
    no_unk = getattr(lm.vocab, "kind", "") == "char" and V > 1   # never emit <unk>
    plain = temperature == 1.0 and top_k is None and top_p is None
    def best(logits: np.ndarray) -> int:
        return int(np.argmax(logits[1:])) + 1 if no_unk else int(np.argmax(logits))

    while True:
        logits = stepper.feed(reading)
        model_p = _softmax(logits, 1.0)
        if temperature == 0.0:
            nxt = best(logits)
        else:
            p = model_p if plain else _probabilities(logits, temperature, top_k, top_p)
            if no_unk and p[0] > 0:
                p = p.copy()
                p[0] = 0.0
            c = np.cumsum(p)
            # inverse-CDF draw: the same distribution as rng.choice, without its per-call checks; when only
            # <unk> had mass, the best real token
            nxt = min(int(np.searchsorted(c, rng.random() * c[-1], side="right")), V - 1) if c[-1] > 0 else best(logits)
        yield nxt, float(model_p[nxt])
        reading = [nxt]


def sample(lm: LanguageModel, prefix: str, length: int = 200, temperature: float = 1.0, top_k: int | None = None,
           top_p: float | None = None, seed: int | None = None) -> Sample:
    """Generate `length` tokens after `prefix`. Temperature 0 is greedy; a seed makes it reproducible."""
    length = check_int("length", length, 1, MAX_LENGTH)
    cleaned, unknown = lm.prepare_prefix(prefix)     # once: the draws start from it
    ids, probs = [], []
    for nxt, prob in _draws(lm, cleaned, temperature, top_k, top_p, seed):
        ids.append(nxt)
        probs.append(prob)
        if len(ids) == length:
            break
    texts = [lm.vocab.token_text(i) for i in ids]
    return Sample(cleaned, unknown, lm.vocab.decode(ids), ids, texts, probs)


LIKE_TEXT = 1.25     # a sample within this factor of real text's bits per character, either way, reads like text
GIBBERISH = 0.8      # a sample at this share of uniform guessing's bits per character or more is gibberish


def odd_choices(mean_bits: float, real_bits: float, vocab_size: int) -> Claim:
    """How often sampling picks unlikely characters, from the sample's mean surprisal under the model (bits per
    character, at T = 1) against the model's on held-out text (NaN when unknown) and against uniform guessing.
    'About as predictable as real text' holds within LIKE_TEXT times real text's bits, either way; below that the
    sample is more predictable than real text (the sampler keeps to the likeliest characters)."""
    check_real("mean surprisal", mean_bits, 0.0)
    V = check_int("vocabulary size", vocab_size, 2)
    uniform = float(np.log2(V))
    numbers = dict(mean=mean_bits, real=real_bits, uniform=uniform)
    at = dict(mean=mean_bits, real=real_bits, uniform=uniform, V=V, within=LIKE_TEXT,
              fewer=real_bits / max(mean_bits, 1e-12))
    if mean_bits >= GIBBERISH * uniform:
        return claim("sample.gibberish", _("At this temperature the odd choices take over: the sample costs the model "
                                           "{mean:.2f} bits per character, close to the {uniform:.2f} of picking "
                                           "uniformly among its {V} characters. It is gibberish.").format(**at),
                     **numbers)
    known = bool(np.isfinite(real_bits))
    if known and real_bits / LIKE_TEXT <= mean_bits <= LIKE_TEXT * real_bits:
        return claim("sample.like_text", _("The model finds its own sample about as predictable as real text "
                                           "({mean:.2f} bits per character against {real:.2f} on held-out text, "
                                           "within {within:g} times either way): odd choices are occasional, as in "
                                           "real text.").format(**at), **numbers)
    if known and mean_bits < real_bits / LIKE_TEXT:
        return claim("sample.predictable", _("The model finds its own sample more predictable than real text: "
                                             "{mean:.2f} bits per character against {real:.2f} on held-out text, "
                                             "{fewer:.1f} times fewer. The sampler keeps to the likeliest characters "
                                             "far more than a writer does, so the text is safe and often "
                                             "repetitive.").format(**at), **numbers)
    text = (_("Sampling keeps some randomness, and here it often picks unlikely characters: {mean:.2f} bits per "
              "character against {real:.2f} on held-out text (uniform guessing: {uniform:.2f}).") if known else
            _("Sampling keeps some randomness, and here it often picks unlikely characters: {mean:.2f} bits per "
              "character (uniform guessing: {uniform:.2f})."))
    return claim("sample.odd", text.format(**at), **numbers)
