"""What every numeric check shares: the problem shapes (CASES), a check's Result, the tolerances and the helpers
that build a torch model from the float64 reference's weights."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from core.nn import rnn_ref
from core.nn.models import ModelSpec, RNNLM, load_reference_params

TOL_ABS = 1e-6     # two ways that round differently (another kernel, finite differences)
TOL_REL = 1e-6
TOL_IDENTITY = 1e-12   # an identity of the maths checked in float64 (a product split in two, clipping, uniform)


@dataclass(frozen=True)
class Case:
    """One shape of problem: batch B, steps T, vocabulary V, hidden h, embedding d (None = one-hot)."""

    B: int
    T: int
    V: int
    h: int
    d: int | None
    seed: int

    @property
    def label(self) -> str:
        inp = f"embed {self.d}" if self.d else "one-hot"
        return f"B={self.B} T={self.T} V={self.V} h={self.h} {inp} seed={self.seed}"

    def data(self):
        rng = np.random.default_rng(1000 + self.seed)
        params = rnn_ref.init_params(self.V, self.h, self.d, seed=self.seed)
        tokens = rng.integers(0, self.V, size=(self.B, self.T))
        targets = rng.integers(0, self.V, size=(self.B, self.T))
        H0 = rng.standard_normal((self.B, self.h)) * 0.5
        return params, tokens, targets, H0


CASES = (
    Case(B=2, T=5, V=7, h=4, d=None, seed=0),
    Case(B=3, T=9, V=11, h=6, d=5, seed=1),
    Case(B=1, T=17, V=5, h=8, d=None, seed=2),
    Case(B=4, T=3, V=28, h=16, d=12, seed=3),
)


@dataclass
class Result:
    name: str
    error: float
    tolerance: float
    detail: str = ""

    @property
    def passed(self) -> bool:
        return bool(np.isfinite(self.error)) and self.error <= self.tolerance


def torch_model(case: Case, cell: str, params) -> RNNLM:
    torch.manual_seed(0)
    model = RNNLM(ModelSpec(case.V, case.h, cell, case.d or 0)).double()
    return load_reference_params(model, params)


def torch_loss(model: RNNLM, tokens, targets, H0):
    tok = torch.as_tensor(tokens)
    state = torch.as_tensor(H0, dtype=torch.float64).requires_grad_(True)
    start = state.unsqueeze(0) if model.cell.layered_state else state
    logits, _ = model(tok, start)
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, model.spec.vocab_size),
                                             torch.as_tensor(targets).reshape(-1))
    return logits, loss, state


def max_abs(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))


def rel_err(a: float, b: float) -> float:
    """|a - b| / max(|a|, |b|), with tiny gradients compared absolutely."""
    scale = max(abs(a), abs(b))
    return abs(a - b) / scale if scale > 1e-7 else abs(a - b)


# The torch implementations of the tanh cell each check is run against, with what each one really is.
TORCH_CELLS = (
    ("scratch", "the torch scratch loop (core.nn.cells.ScratchRNN)", "autograd through the torch scratch loop"),
    ("torch", "torch.nn.RNN (torch's own kernel)", "autograd through torch.nn.RNN (torch's own backward)"),
    ("rnn", "the fused RNN (core.nn.fused)", "the fused RNN's hand-written backward (core.nn.fused)"),
)
