"""RNN language models in torch: a from-scratch tanh RNN that loops over time (as the book writes it) and
fused layers (nn.RNN, nn.GRU, nn.LSTM) behind one language-model class.

All take token ids of shape (batch, time) and return logits of shape (batch, time, vocab) plus the
final state. The scratch and the fused tanh RNN accept the same weights as core.rnn_ref, so all three
can be compared number for number.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from core.checks import check_choice, check_int, check_real
from core.fused import FusedRNN, linear_cross_entropy

CELLS = ("scratch", "rnn", "gru", "lstm")


@dataclass(frozen=True)
class ModelSpec:
    """Everything needed to rebuild a model (saved next to its weights)."""

    vocab_size: int
    hidden_size: int = 256
    cell: str = "rnn"          # scratch | rnn | gru | lstm
    embed_dim: int = 0         # 0: one-hot inputs
    num_layers: int = 1
    dropout: float = 0.0

    def __post_init__(self):
        check_int("vocab_size", self.vocab_size, 2, 200_000)
        check_int("hidden_size", self.hidden_size, 1, 8192)
        check_choice("cell", self.cell, CELLS)
        check_int("embed_dim", self.embed_dim, 0, 8192)
        check_int("num_layers", self.num_layers, 1, 8)
        check_real("dropout", self.dropout, 0.0, 0.9)
        if self.cell == "scratch" and self.num_layers != 1:
            raise ValueError("The scratch RNN has one layer; use cell 'rnn' for several layers.")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "ModelSpec":
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        return cls(**known)


class ScratchRNN(nn.Module):
    """The tanh recurrence written out, one time step per loop iteration: H_t = tanh(X_t W_xh + H_{t-1} W_hh + b_h)."""

    def __init__(self, input_size: int, hidden_size: int, sigma: float = 0.01):
        super().__init__()
        self.hidden_size = hidden_size
        self.W_xh = nn.Parameter(torch.randn(input_size, hidden_size) * sigma)
        self.W_hh = nn.Parameter(torch.randn(hidden_size, hidden_size) * sigma)
        self.b_h = nn.Parameter(torch.zeros(hidden_size))

    def forward(self, X: torch.Tensor, H: torch.Tensor | None = None, token_ids: torch.Tensor | None = None):
        """X: (batch, time, input) inputs; with token_ids (one-hot case) X may be None and rows of W_xh are
        looked up instead of multiplying by one-hot vectors (the same numbers, less work)."""
        batch, steps = (token_ids.shape if token_ids is not None else X.shape[:2])
        if H is None:
            H = torch.zeros(batch, self.hidden_size, device=self.W_hh.device, dtype=self.W_hh.dtype)
        # The input part of every step does not depend on H: compute it for all steps at once.
        # F.embedding rather than W_xh[token_ids]: the same rows, but its backward adds them up in a fixed
        # order (indexing's backward accumulates in parallel on the CPU, and the last digits vary run to run).
        XW = F.embedding(token_ids, self.W_xh) if token_ids is not None else X @ self.W_xh
        outputs = []
        for t in range(steps):
            H = torch.tanh(XW[:, t] + H @ self.W_hh + self.b_h)
            outputs.append(H)
        return torch.stack(outputs, dim=1), H


class RNNLM(nn.Module):
    """Token embedding (or one-hot) -> recurrent layer(s) -> linear output layer."""

    def __init__(self, spec: ModelSpec):
        super().__init__()
        self.spec = spec
        V, h, d = spec.vocab_size, spec.hidden_size, spec.embed_dim
        self.embedding = nn.Embedding(V, d) if d else None
        in_size = d or V
        if spec.cell == "scratch":
            self.rnn = ScratchRNN(in_size, h)
        else:
            layer = {"rnn": FusedRNN, "gru": nn.GRU, "lstm": nn.LSTM}[spec.cell]
            self.rnn = layer(in_size, h, num_layers=spec.num_layers, batch_first=True,
                             dropout=spec.dropout if spec.num_layers > 1 else 0.0)
        self.drop = nn.Dropout(spec.dropout)
        self.head = nn.Linear(h, V)

    def begin_state(self, batch_size: int, device=None, dtype=None):
        p = self.head.weight
        shape = (batch_size, self.spec.hidden_size) if self.spec.cell == "scratch" else \
            (self.spec.num_layers, batch_size, self.spec.hidden_size)
        zeros = torch.zeros(shape, device=device or p.device, dtype=dtype or p.dtype)
        return (zeros, zeros.clone()) if self.spec.cell == "lstm" else zeros

    def _fused_tokens(self, tokens: torch.Tensor) -> bool:
        """One-hot inputs into the fused CPU RNN: the path that takes token ids directly."""
        return self.embedding is None and isinstance(self.rnn, FusedRNN) and self.rnn.uses_fused(tokens)

    def hidden_states(self, tokens: torch.Tensor, state=None):
        """Top-layer hidden states (batch, time, hidden) and the final state."""
        if tokens.dim() != 2:
            raise ValueError(f"tokens must have shape (batch, time), got {tuple(tokens.shape)}.")
        if self.spec.cell == "scratch":
            if self.embedding is None:
                return self.rnn(None, state, token_ids=tokens)
            return self.rnn(self.embedding(tokens), state)
        if self._fused_tokens(tokens):
            return self.rnn.forward_tokens(tokens, state)
        X = self.embedding(tokens) if self.embedding is not None else \
            F.one_hot(tokens, self.spec.vocab_size).to(self.head.weight.dtype)
        return self.rnn(X, state)

    def forward(self, tokens: torch.Tensor, state=None):
        outputs, state = self.hidden_states(tokens, state)
        return self.head(self.drop(outputs)), state

    def loss(self, tokens: torch.Tensor, targets: torch.Tensor, state=None, reduction: str = "mean"):
        """Cross-entropy of predicting targets (batch, time) and the final state. Same value as applying
        F.cross_entropy to forward()'s logits; with one-hot inputs on the CPU it works time-major
        throughout, which saves copying the largest tensors between layouts."""
        if self._fused_tokens(tokens):
            outputs, state = self.rnn.forward_tokens(tokens, state, time_major=True)
            h = self.drop(outputs).reshape(-1, outputs.shape[-1])
            loss = linear_cross_entropy(h, self.head.weight, self.head.bias, targets.t().reshape(-1), reduction)
            return loss, state
        logits, state = self(tokens, state)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction=reduction), state

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


def detach_state(state):
    """Cut the graph at a window edge (truncated BPTT): the state's values carry on, its history does not."""
    if state is None:
        return None
    if isinstance(state, tuple):
        return tuple(s.detach() for s in state)
    return state.detach()


def load_reference_params(model: RNNLM, params: dict[str, np.ndarray]) -> RNNLM:
    """Copy core.rnn_ref parameters into a one-layer scratch or fused tanh model (same numbers)."""
    spec = model.spec
    if spec.cell not in ("scratch", "rnn") or spec.num_layers != 1:
        raise ValueError("Reference weights fit a one-layer tanh RNN ('scratch' or 'rnn') only.")
    if ("E" in params) != bool(spec.embed_dim):
        raise ValueError("Reference weights and model disagree on embedding vs one-hot input.")
    p = next(model.parameters())
    t = lambda a: torch.as_tensor(np.asarray(a), dtype=p.dtype, device=p.device)  # noqa: E731
    with torch.no_grad():
        if spec.embed_dim:
            model.embedding.weight.copy_(t(params["E"]))
        if spec.cell == "scratch":
            model.rnn.W_xh.copy_(t(params["W_xh"]))
            model.rnn.W_hh.copy_(t(params["W_hh"]))
            model.rnn.b_h.copy_(t(params["b_h"]))
        else:
            model.rnn.weight_ih_l0.copy_(t(params["W_xh"]).T)
            model.rnn.weight_hh_l0.copy_(t(params["W_hh"]).T)
            model.rnn.bias_ih_l0.copy_(t(params["b_h"]))
            model.rnn.bias_hh_l0.zero_()
        model.head.weight.copy_(t(params["W_hq"]).T)
        model.head.bias.copy_(t(params["b_q"]))
    return model


def reference_grads(model: RNNLM) -> dict[str, np.ndarray]:
    """The model's .grad values under core.rnn_ref's names and layouts."""
    g = lambda x: x.grad.detach().cpu().numpy()  # noqa: E731
    out = {"W_hq": g(model.head.weight).T, "b_q": g(model.head.bias)}
    if model.spec.embed_dim:
        out["E"] = g(model.embedding.weight)
    if model.spec.cell == "scratch":
        out.update(W_xh=g(model.rnn.W_xh), W_hh=g(model.rnn.W_hh), b_h=g(model.rnn.b_h))
    else:
        out.update(W_xh=g(model.rnn.weight_ih_l0).T, W_hh=g(model.rnn.weight_hh_l0).T,
                   b_h=g(model.rnn.bias_ih_l0))
    return out


def clip_gradients(parameters, max_norm: float) -> float:
    """Rescale all gradients together so their global L2 norm is at most max_norm; return the norm before."""
    max_norm = check_real("max_norm", max_norm, 0.0, lo_open=True)
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return 0.0
    norms = [torch.linalg.vector_norm(g.detach(), dtype=torch.float64) for g in grads]
    norm_value = float(torch.linalg.vector_norm(torch.stack(norms)))
    if math.isfinite(norm_value) and norm_value > max_norm:
        scale = max_norm / norm_value
        for g in grads:
            g.mul_(scale)
    return norm_value


def perplexity(mean_cross_entropy: float) -> float:
    """exp of the mean per-token cross-entropy (in nats)."""
    return float(math.exp(min(float(mean_cross_entropy), 700.0)))
