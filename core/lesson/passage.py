"""The chapter's Act 4: a character RNN memorising one short passage, and teacher forcing shown on it.

The passage is cut from the corpus at run time (the first characters of the cleaned text; never stored).
Our own stored run of it is core.lesson.store (rebuilt by `python -m core passage`); the scratch loop and
nn.RNN timed on it are core.lesson.cell_timing.

Teacher forcing: in training, the network reads the true previous character at every step. Generating, it
reads its own previous guess. teacher_forcing() scores both on the same text.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from core.checks import check_int
from core.i18n import _, ngettext
from core.runs.config import PRESETS, TrainConfig
from core.runs.record import HistoryRow
from core.text.corpus import clean
from core.nn.sampling import LanguageModel, sample

SHOWN_EPOCHS = (0, 5, 10, 20, 40)      # samples kept for the figure (and the last epoch)
MAX_TF_CHARS = 2000


def config(seed: int = 0) -> TrainConfig:
    """The passage preset with the learner's seed."""
    return replace(PRESETS["passage"].config, seed=check_int("seed", seed, 0, 2**31 - 1))


def passage_length(cfg: TrainConfig) -> int:
    """Characters the training windows cover: num_train windows of num_steps, stride one, plus the last target."""
    return cfg.num_train + cfg.num_steps


def passage(raw_text: str, cfg: TrainConfig | None = None) -> str:
    """The passage the run learns: the start of the cleaned corpus."""
    cfg = cfg or config()
    text = clean(raw_text, cfg.cleaning)
    n = passage_length(cfg)
    if len(text) < n + cfg.num_val:
        raise ValueError(_("The text has {n} characters after cleaning; the passage run needs at least "
                           "{least}.").format(n=len(text), least=n + cfg.num_val))
    return text[:n]


def continuation(raw_text: str, length: int = 200, cfg: TrainConfig | None = None) -> str:
    """The cleaned text right after the passage: text the run never trains on."""
    cfg = cfg or config()
    length = check_int("length", length, 1, MAX_TF_CHARS)
    text = clean(raw_text, cfg.cleaning)
    n = passage_length(cfg)
    return text[n: n + length]


def samples_to_show(history: list[HistoryRow]) -> dict[int, str]:
    """Epoch -> greedy sample, for the epochs the figure shows."""
    last = history[-1].epoch
    return {row.epoch: row.sample for row in history if row.epoch in SHOWN_EPOCHS or row.epoch == last}


@dataclass
class TeacherForcing:
    """The same text read two ways by one model. forced[i]: the model's guess for text[prefix + i] after reading
    the true text[:prefix + i]. free[i]: its guess after reading the prefix and then its own guesses."""

    text: str
    prefix: int
    forced: str
    free: str

    def hits(self, guesses: str) -> np.ndarray:
        return np.array([g == t for g, t in zip(guesses, self.text[self.prefix:])], dtype=bool)

    @property
    def forced_accuracy(self) -> float:
        return float(self.hits(self.forced).mean())

    @property
    def free_accuracy(self) -> float:
        return float(self.hits(self.free).mean())

    @property
    def first_free_miss(self) -> int | None:
        """Characters the free-running model gets right before its first mistake (None: no mistake)."""
        misses = np.flatnonzero(~self.hits(self.free))
        return int(misses[0]) if misses.size else None

    def free_words(self) -> str:
        """Where the model's own text leaves the passage, in words (from first_free_miss)."""
        first = self.first_free_miss
        if first is None:
            return _("never leaves it")
        if first == 0:
            return _("leaves it at the first character")
        return ngettext("follows it for {n} character, then leaves it", "follows it for {n} characters, then leaves it",
                        first).format(n=first)


@torch.no_grad()
def teacher_forcing(lm: LanguageModel, text: str, prefix: int = 18) -> TeacherForcing:
    """Greedy guesses for text[prefix:], with the true history (teacher forcing) and with the model's own."""
    if not isinstance(text, str) or not text:
        raise ValueError("teacher_forcing needs some text.")
    if len(text) > MAX_TF_CHARS:
        raise ValueError(f"Keep the text under {MAX_TF_CHARS} characters (it has {len(text)}).")
    prefix = check_int("prefix", prefix, 1, len(text) - 1, what="the text's length minus one")
    unknown = lm.vocab.unknown(text)
    if unknown:
        raise ValueError(f"The model does not know the characters {''.join(unknown)!r}; clean the text as it was.")
    ids = torch.as_tensor(lm.vocab.encode(text), dtype=torch.long, device=lm.device)
    logits = lm.net(ids[None, :-1])[0]
    guesses = logits[0, prefix - 1:].argmax(-1).cpu().numpy()
    forced = "".join(lm.vocab.token_text(int(i)) for i in guesses)
    free = sample(lm, text[:prefix], len(text) - prefix, temperature=0.0).text
    return TeacherForcing(text, prefix, forced, free)


@dataclass(frozen=True)
class GradientReach:
    """How far back the loss of a window's last prediction reaches: norms[k] is ||dL/dH|| for the state k steps
    before the last one (k = 0 .. steps - 1), L the cross-entropy of predicting the window's last character."""

    text: str
    norms: np.ndarray

    @property
    def rate(self) -> float:
        """The norm's geometric-mean change per step back."""
        return float((self.norms[-1] / self.norms[0]) ** (1.0 / (len(self.norms) - 1)))


def gradient_reach(lm: LanguageModel, text: str) -> GradientReach:
    """Backpropagation through time written out, on a trained one-layer tanh RNN: run the text through it, take
    the loss of predicting its last character, and send that loss's gradient back state by state (through W_hq,
    then tanh's slope and W_hh at every step back), recording its norm at each state."""
    spec = lm.net.spec
    if spec.num_layers != 1 or lm.net.cell.tanh_layout is None:
        raise ValueError("gradient_reach needs a one-layer plain tanh RNN.")
    ids = lm.vocab.encode(text) if isinstance(text, str) else []
    if not 3 <= len(ids) <= MAX_TF_CHARS:
        raise ValueError(f"Give a text of 3 to {MAX_TF_CHARS} known characters.")
    with torch.no_grad():
        layer = {k: v.detach().double().cpu().numpy() for k, v in lm.net.tanh_layers()[0].items()}
        W_hq = lm.net.head.weight.detach().double().cpu().numpy().T
        b_q = lm.net.head.bias.detach().double().cpu().numpy()
        E = lm.net.embedding.weight.detach().double().cpu().numpy() if spec.embed_dim else None
    inputs = (E @ layer["W_xh"] if E is not None else layer["W_xh"]) + layer["b_h"]   # one row per token
    states, H = [], np.zeros(spec.hidden_size)
    for i in ids[:-1]:
        H = np.tanh(inputs[i] + H @ layer["W_hh"])
        states.append(H)
    O = H @ W_hq + b_q
    dO = np.exp(O - O.max())
    dO /= dO.sum()
    dO[ids[-1]] -= 1.0                                  # d(cross-entropy)/dO
    dH, norms = dO @ W_hq.T, []
    for H_t in reversed(states):
        norms.append(float(np.linalg.norm(dH)))
        dH = (dH * (1.0 - H_t ** 2)) @ layer["W_hh"].T   # through tanh's slope, then W_hh, one step back
    return GradientReach(text, np.asarray(norms))
