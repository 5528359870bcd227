"""RNN language models in torch: any cell of core.nn.cells (the from-scratch tanh RNN that loops over time as
the book writes it, the fused tanh RNN, GRU, LSTM) behind one language-model class.

All take token ids of shape (batch, time) and return logits of shape (batch, time, vocab) plus the
final state. The scratch and the fused tanh RNN accept the same weights as core.nn.rnn_ref, so all three
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
from core.nn import interrupt
from core.nn.cells import CELLS, Cell, get_cell
from core.nn.fused import TokenRNNStep, linear_cross_entropy, token_rnn_loss


@dataclass(frozen=True)
class ModelSpec:
    """Everything needed to rebuild a model (saved next to its weights)."""

    vocab_size: int
    hidden_size: int = 256
    cell: str = "rnn"          # a name in core.nn.cells.CELLS
    embed_dim: int = 0         # 0: one-hot inputs
    num_layers: int = 1
    dropout: float = 0.0

    def __post_init__(self):
        check_int("vocab_size", self.vocab_size, 2, 200_000)
        check_int("hidden_size", self.hidden_size, 1, 8192)
        check_choice("cell", self.cell, tuple(CELLS))
        check_int("embed_dim", self.embed_dim, 0, 8192)
        check_real("dropout", self.dropout, 0.0, 0.9)
        check_int("num_layers", self.num_layers, 1, 8)
        cell = get_cell(self.cell)
        if self.num_layers > cell.max_layers:
            raise ValueError(f"The {self.cell} cell ({cell.label}) has at most {cell.max_layers} layer(s); "
                             "use cell 'rnn' for several layers.")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "ModelSpec":
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        return cls(**known)


class RNNLM(nn.Module):
    """Token embedding (or one-hot) -> recurrent layer(s) -> linear output layer."""

    def __init__(self, spec: ModelSpec):
        if not isinstance(spec, ModelSpec):
            raise ValueError("RNNLM is built from a ModelSpec.")
        super().__init__()
        self.spec = spec
        V, h, d = spec.vocab_size, spec.hidden_size, spec.embed_dim
        self.embedding = nn.Embedding(V, d) if d else None
        self.cell: Cell = CELLS[spec.cell]   # a name ModelSpec has checked
        self.rnn = self.cell.build(d or V, h, spec.num_layers, spec.dropout)
        self.drop = nn.Dropout(spec.dropout)
        self.head = nn.Linear(h, V)

    def fused_tokens(self, tokens: torch.Tensor) -> bool:
        """One-hot inputs into the fused CPU RNN: the path that takes token ids directly."""
        return self.embedding is None and self.cell.token_input == "fused" and self.rnn.uses_fused(tokens)

    def _one_step_function(self, reduction: str) -> bool:
        """Training one tanh layer (no dropout to apply) with the mean loss: core.nn.fused's single Function."""
        return (reduction == "mean" and torch.is_grad_enabled() and self.spec.num_layers == 1
                and not (self.training and self.drop.p > 0) and self.head.weight.requires_grad)

    @staticmethod
    def _first_state(state) -> torch.Tensor | None:
        """The one tanh layer's starting state (batch, hidden): the carried one, else None (zeros, which core.nn.fused
        knows add nothing to W_hh's gradient)."""
        return state[0] if state is not None else None

    def hidden_states(self, tokens: torch.Tensor, state=None):
        """Top-layer hidden states (batch, time, hidden) and the final state."""
        if tokens.dim() != 2:
            raise ValueError(f"tokens must have shape (batch, time), got {tuple(tokens.shape)}.")
        if self.embedding is None and self.cell.token_input == "lookup":
            return self.rnn(None, state, token_ids=tokens)
        if self.fused_tokens(tokens):
            return self.rnn.forward_tokens(tokens, state)
        X = self.embedding(tokens) if self.embedding is not None else \
            F.one_hot(tokens, self.spec.vocab_size).to(self.head.weight.dtype)
        if interrupt.active() and X.device.type == "cpu" and X.shape[1] > STOP_CHUNK:
            return _in_chunks(self.rnn, X, state)
        return self.rnn(X, state)

    def forward(self, tokens: torch.Tensor, state=None):
        outputs, state = self.hidden_states(tokens, state)
        return self.head(self.drop(outputs)), state

    def loss(self, tokens: torch.Tensor, targets: torch.Tensor, state=None, reduction: str = "mean"):
        """Cross-entropy of predicting targets (batch, time) and the final state. Same value as applying
        F.cross_entropy to forward()'s logits; with one-hot inputs on the CPU it works time-major
        throughout, which saves copying the largest tensors between layouts."""
        if self.fused_tokens(tokens) and self._one_step_function(reduction):
            r = self.rnn
            loss, final = token_rnn_loss(tokens, targets, r.weight_ih_l0, r.bias_ih_l0 + r.bias_hh_l0,
                                         self._first_state(state), r.weight_hh_l0, self.head.weight,
                                         self.head.bias)
            return loss, final.unsqueeze(0)   # the final state, for the next window (never differentiated)
        if self.fused_tokens(tokens):
            outputs, state = self.rnn.forward_tokens(tokens, state, time_major=True)
            h = self.drop(outputs).reshape(-1, outputs.shape[-1])
            loss = linear_cross_entropy(h, self.head.weight, self.head.bias, targets.t().reshape(-1), reduction)
            return loss, state
        logits, state = self(tokens, state)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction=reduction), state

    def loss_sum(self, tokens: torch.Tensor, targets: torch.Tensor) -> float:
        """The summed cross-entropy of the windows (batch, time) from zero states (as Blocks.loss_sum)."""
        return float(self.loss(tokens, targets, reduction="sum")[0])

    def training_loss(self, tokens: torch.Tensor, targets: torch.Tensor, state=None):
        """A training step's mean loss, its final state, and backward(): the function that puts the loss's
        gradients into the parameters' .grad. One tanh layer over one-hot tokens on the CPU is differentiated by
        hand (core.nn.fused.TokenRNNStep: no autograd graph, the same numbers); any other model by loss.backward."""
        if self.fused_tokens(tokens) and self._one_step_function("mean"):
            r = self.rnn
            step = TokenRNNStep(tokens, targets, self._first_state(state),
                                (r.weight_ih_l0, r.bias_ih_l0, r.bias_hh_l0, r.weight_hh_l0, self.head.weight,
                                 self.head.bias))
            return step.loss, step.final.unsqueeze(0), step.backward
        loss, state = self.loss(tokens, targets, state)
        return loss, state, loss.backward

    def tanh_layers(self) -> list[dict[str, torch.Tensor]]:
        """For a plain tanh cell, each layer's W_xh, W_hh and b_h in the book's row layout (views, or the
        sum of the two biases); ValueError for a gated cell."""
        extras = self.cell.extra_biases(self.spec.num_layers) if self.cell.extra_biases else []
        out = []
        for k in range(self.spec.num_layers):
            layer = {name: p.T if transposed else p for name, (p, transposed) in self.tanh_params(k).items()}
            if extras:
                layer["b_h"] = layer["b_h"] + getattr(self.rnn, extras[k])
            out.append(layer)
        return out

    def tanh_params(self, k: int) -> dict[str, tuple[nn.Parameter, bool]]:
        """Layer k's W_xh, W_hh, b_h as (the module's parameter, stored transposed?); ValueError for a gated cell."""
        if self.cell.tanh_layout is None:
            raise ValueError(f"The {self.spec.cell} cell is not a plain tanh RNN.")
        return {name: (getattr(self.rnn, attr), t) for name, (attr, t) in self.cell.tanh_layout(k).items()}

    def init_book(self) -> None:
        """The book's scratch-RNN initialisation: every weight N(0, 0.01^2), every bias 0, and one hidden bias
        (a bias that only ever adds to another, such as nn.RNN's b_hh, stays at zero and is not trained: SGD
        on both would move their sum at twice the learning rate and count its gradient twice when clipping)."""
        with torch.no_grad():
            for name, p in self.named_parameters():
                if "bias" in name or name.endswith("b_h"):
                    p.zero_()
                else:
                    p.normal_(0.0, 0.01)
        if self.cell.extra_biases is not None:
            for name in self.cell.extra_biases(self.spec.num_layers):
                getattr(self.rnn, name).requires_grad_(False)


STOP_CHUNK = 8   # time steps a gated cell runs between two looks at its run's stop flag


def _in_chunks(rnn: nn.Module, X: torch.Tensor, state, chunk: int = STOP_CHUNK):
    """rnn over X (batch, time, input) a few time steps at a time, the state carried from chunk to chunk: the
    same result as one call, but Stop is looked at between chunks, forward and backward (core.nn.interrupt)."""
    outputs = []
    for i in range(0, X.shape[1], chunk):
        interrupt.poll()
        out, state = rnn(X[:, i:i + chunk], state)
        for t in (state if isinstance(state, tuple) else (state,)):
            if t.requires_grad:
                t.register_hook(interrupt.poll_hook)   # polls between two chunks' gradients
        outputs.append(out)
    return torch.cat(outputs, dim=1), state


def detach_state(state):
    """Cut the graph at a window edge (truncated BPTT): the state's values carry on, its history does not."""
    if state is None:
        return None
    if isinstance(state, tuple):
        return tuple(s.detach() for s in state)
    return state.detach()


def _reference_layout(model: RNNLM) -> dict[str, tuple[torch.nn.Parameter, bool]]:
    """core.nn.rnn_ref's names -> (the model's parameter, stored transposed?) for a one-layer tanh model."""
    spec = model.spec
    if model.cell.tanh_layout is None or spec.num_layers != 1:
        raise ValueError("Reference weights fit a one-layer plain tanh RNN ('scratch' or 'rnn') only.")
    out = model.tanh_params(0)
    out.update(W_hq=(model.head.weight, True), b_q=(model.head.bias, False))
    if spec.embed_dim:
        out["E"] = (model.embedding.weight, False)
    return out


def load_reference_params(model: RNNLM, params: dict[str, np.ndarray]) -> RNNLM:
    """Copy core.nn.rnn_ref parameters into a one-layer plain tanh model (same numbers)."""
    layout = _reference_layout(model)
    if ("E" in params) != bool(model.spec.embed_dim):
        raise ValueError("Reference weights and model disagree on embedding vs one-hot input.")
    with torch.no_grad():
        for name, (p, transposed) in layout.items():
            value = torch.as_tensor(np.asarray(params[name]), dtype=p.dtype, device=p.device)
            p.copy_(value.T if transposed else value)
        for extra in model.cell.extra_biases(1) if model.cell.extra_biases else []:
            getattr(model.rnn, extra).zero_()
    return model


def reference_grads(model: RNNLM) -> dict[str, np.ndarray]:
    """The model's .grad values under core.nn.rnn_ref's names and layouts."""
    out = {}
    for name, (p, transposed) in _reference_layout(model).items():
        g = p.grad.detach().cpu().numpy()
        out[name] = g.T if transposed else g
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


@torch.no_grad()
def stream_cross_entropy(net: RNNLM, ids: torch.Tensor, device, streams: int = 1, chunk: int = 256):
    """Summed cross-entropy and count of predicting ids[1:] from ids[:-1], the state carried throughout
    (the text is cut into `streams` equal pieces evaluated in parallel; streams=1 is exact carry)."""
    was_training = net.training
    net.eval()
    L = (len(ids) - 1) // streams
    xs = ids[: streams * L].view(streams, L).to(device)
    ys = ids[1: streams * L + 1].view(streams, L).to(device)
    state, total = None, 0.0
    for i in range(0, L, chunk):
        loss, state = net.loss(xs[:, i: i + chunk], ys[:, i: i + chunk], state, reduction="sum")
        total += float(loss)
    net.train(was_training)
    return total, streams * L
