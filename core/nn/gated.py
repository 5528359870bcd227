"""Cells written out step by step, to read and to look inside: a GRU and an LSTM whose gates each step can be kept
and shown (torch's nn.GRU and nn.LSTM compute the same numbers in one fused call and keep no gate), and the plain
tanh RNN beside them in the same form, h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh), as nn.RNN has it.

Both hold their weights as torch does (weight_ih: the gates' input weights stacked, weight_hh: their hidden
weights, bias_ih and bias_hh), so a torch layer's weights copy in unchanged and `python -m core verify` compares
the two, forward and backward, in float64 (core.nn.verify.gates).

LSTM (as in v1.0's 10.1, the book's gate order i, f, o with the candidate g, which torch stacks as i, f, g, o):
    i, f, o = sigmoid(...), g = tanh(...),   c_t = f * c_{t-1} + i * g,   h_t = o * tanh(c_t)
GRU (v1.0's 10.2, with one difference kept from torch and cuDNN, so that the two can be compared: the reset gate
scales W_hn h_{t-1} + b_hn after the product, where the book scales h_{t-1} before it):
    r, z = sigmoid(...),   n = tanh(W_in x + b_in + r * (W_hn h + b_hn)),   h_t = (1 - z) * n + z * h_{t-1}
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from core.checks import check_choice, check_int

KINDS = {"rnn": 1, "gru": 3, "lstm": 4}      # pre-activations per hidden unit


@dataclass
class Gates:
    """Each step's gate values, (batch, T, hidden) each: LSTM input, forget, output; GRU reset, update."""
    values: dict[str, torch.Tensor]

    def mean(self, name: str) -> float:
        return float(self.values[name].mean())


class GatedCell(nn.Module):
    """One layer of a plain RNN, a GRU or an LSTM, stepped in Python (batch first: inputs (batch, T, n_in))."""

    def __init__(self, kind: str, input_size: int, hidden_size: int):
        super().__init__()
        self.kind = check_choice("cell", kind, KINDS)
        n_in, h = check_int("input size", input_size, 1), check_int("hidden size", hidden_size, 1)
        g = KINDS[kind]
        self.hidden_size = h
        self.weight_ih = nn.Parameter(torch.empty(g * h, n_in))
        self.weight_hh = nn.Parameter(torch.empty(g * h, h))
        self.bias_ih = nn.Parameter(torch.empty(g * h))
        self.bias_hh = nn.Parameter(torch.empty(g * h))
        bound = 1.0 / math.sqrt(h)        # torch's own initialisation for its recurrent layers
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    def gate_bias(self, name: str) -> torch.Tensor:
        """The slice of bias_ih belonging to one gate (LSTM: i, f, g, o; GRU: r, z, n), for setting it."""
        order = {"lstm": "ifgo", "gru": "rzn", "rnn": "h"}[self.kind]
        k, h = order.index(name), self.hidden_size
        return self.bias_ih.data[k * h:(k + 1) * h]

    def step(self, x: torch.Tensor, state, keep: dict | None = None, gi: torch.Tensor | None = None):
        """One step: x (batch, n_in), state h (RNN, GRU) or (h, c) (LSTM); returns the new state. keep: a dict each
        gate's value is appended to. gi: the input's part, W_ih x + b_ih, when it was worked out already."""
        h = state[0] if self.kind == "lstm" else state
        gi = x @ self.weight_ih.T + self.bias_ih if gi is None else gi
        gh = h @ self.weight_hh.T + self.bias_hh
        if self.kind == "rnn":
            new, parts = torch.tanh(gi + gh), {}
        elif self.kind == "lstm":
            i, f, g, o = (gi + gh).chunk(4, dim=1)
            i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
            c = f * state[1] + i * g
            new = (o * torch.tanh(c), c)
            parts = {"input": i, "forget": f, "output": o}
        else:
            (ir, iz, in_), (hr, hz, hn) = gi.chunk(3, dim=1), gh.chunk(3, dim=1)
            r, z = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
            n = torch.tanh(in_ + r * hn)
            new = (1 - z) * n + z * h
            parts = {"reset": r, "update": z}
        if keep is not None:
            for name, value in parts.items():
                keep.setdefault(name, []).append(value.detach())
        return new

    def zero_state(self, batch: int, like: torch.Tensor):
        h = like.new_zeros(batch, self.hidden_size)
        return (h, h.clone()) if self.kind == "lstm" else h

    def forward(self, X: torch.Tensor, state=None, gates: bool = False):
        """X (batch, T, n_in) -> outputs (batch, T, hidden) and the last state; with gates, also their Gates."""
        if X.dim() != 3:
            raise ValueError("A gated cell reads inputs shaped (batch, steps, inputs).")
        state = self.zero_state(X.shape[0], X) if state is None else state
        keep: dict | None = {} if gates else None
        inputs = X @ self.weight_ih.T + self.bias_ih     # every step's input part at once: only h waits for t - 1
        outputs = []
        for t in range(X.shape[1]):
            state = self.step(X[:, t], state, keep, gi=inputs[:, t])
            outputs.append(state[0] if self.kind == "lstm" else state)
        out = torch.stack(outputs, dim=1)
        if not gates:
            return out, state
        return out, state, Gates({k: torch.stack(v, dim=1) for k, v in keep.items()})

    def copy_from(self, layer: nn.Module) -> "GatedCell":
        """Take a one-layer torch nn.RNN, nn.GRU or nn.LSTM's weights (the same names, layer 0)."""
        with torch.no_grad():
            for name, p in self.named_parameters():
                p.copy_(getattr(layer, f"{name}_l0").to(p.dtype))
        return self
