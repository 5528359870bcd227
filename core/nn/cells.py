"""The recurrent cells RNN Lab can train, in one registry: adding a cell is one entry here plus its tests.

Each entry says how to build the layer, what state it carries, and (for plain tanh cells) where its
weights are, so that the numpy sampling fast path, the book's initialisation and the reference-weight
checks work for it without naming it anywhere else.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
from torch import nn
from torch.nn import functional as F

from core.nn.fused import FusedRNN
from core.nn import interrupt
from core.i18n import N_


class ScratchRNN(nn.Module):
    """The tanh recurrence written out, one time step per loop iteration: H_t = tanh(X_t W_xh + H_{t-1} W_hh + b_h)."""

    def __init__(self, input_size: int, hidden_size: int, sigma: float = 0.01):
        super().__init__()
        self.hidden_size = hidden_size
        self.W_xh = nn.Parameter(torch.randn(input_size, hidden_size) * sigma)
        self.W_hh = nn.Parameter(torch.randn(hidden_size, hidden_size) * sigma)
        self.b_h = nn.Parameter(torch.zeros(hidden_size))

    def forward(self, X, H=None, token_ids=None):
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
            if t % 8 == 0 and interrupt.active():
                interrupt.poll()
                if H.requires_grad:
                    H.register_hook(interrupt.poll_hook)
            H = torch.tanh(XW[:, t] + H @ self.W_hh + self.b_h)
            outputs.append(H)
        return torch.stack(outputs, dim=1), H


# A tanh layer's weights in the book's (row) layout: H_t = tanh(X_t W_xh + H_{t-1} W_hh + b_h).
# Each entry names the module's parameter and whether it is stored transposed.
TanhLayout = dict[str, tuple[str, bool]]


@dataclass(frozen=True)
class Cell:
    name: str
    label: str                                             # how the Training form shows it
    build: Callable[[int, int, int, float], nn.Module]     # (input size, hidden, layers, dropout) -> layer
    max_layers: int = 8
    gates: int = 1                                         # pre-activations per hidden unit (GRU 3, LSTM 4)
    layered_state: bool = True                             # state (layers, batch, h); False: (batch, h)
    tanh_layout: Callable[[int], TanhLayout] | None = None  # plain tanh cells: weights of layer k
    extra_biases: Callable[[int], list[str]] | None = None  # biases that only ever add to another one
    # How one-hot inputs reach the layer: "" as one-hot vectors; "lookup": layer(None, state, token_ids=ids)
    # looks rows of W_xh up; "fused": layer.uses_fused(ids) says when layer.forward_tokens(ids, state,
    # time_major) runs the fused CPU path, whose outputs the loss then takes time-major.
    token_input: str = ""


def _fused(kind):
    def build(n_in: int, hidden: int, layers: int, dropout: float) -> nn.Module:
        return kind(n_in, hidden, num_layers=layers, batch_first=True, dropout=dropout if layers > 1 else 0.0)
    return build


def _scratch(n_in: int, hidden: int, layers: int, dropout: float) -> nn.Module:
    return ScratchRNN(n_in, hidden)


def _torch_rnn_layout(k: int) -> TanhLayout:
    return {"W_xh": (f"weight_ih_l{k}", True), "W_hh": (f"weight_hh_l{k}", True), "b_h": (f"bias_ih_l{k}", False)}


CELLS: dict[str, Cell] = {c.name: c for c in (
    Cell("scratch", N_("RNN from scratch"), _scratch, max_layers=1, layered_state=False, token_input="lookup",
         tanh_layout=lambda k: {"W_xh": ("W_xh", False), "W_hh": ("W_hh", False), "b_h": ("b_h", False)}),
    # nn.RNN adds two hidden biases, b_ih and b_hh, which only ever enter as their sum.
    Cell("rnn", N_("RNN (fused)"), _fused(FusedRNN), tanh_layout=_torch_rnn_layout, token_input="fused",
         extra_biases=lambda layers: [f"bias_hh_l{k}" for k in range(layers)]),
    Cell("torch", N_("RNN (torch nn.RNN)"), _fused(nn.RNN), tanh_layout=_torch_rnn_layout,
         extra_biases=lambda layers: [f"bias_hh_l{k}" for k in range(layers)]),
    Cell("gru", N_("GRU"), _fused(nn.GRU), gates=3),
    Cell("lstm", N_("LSTM"), _fused(nn.LSTM), gates=4),   # its state is an (h, c) pair, which nn.LSTM handles
)}
CELL_NAMES = tuple(CELLS)


def get_cell(name: str) -> Cell:
    if name not in CELLS:
        raise ValueError(f"cell must be one of {', '.join(CELLS)}; got {name!r}.")
    return CELLS[name]
