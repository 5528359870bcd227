"""The cells stepped in Python (core.nn.gated) against torch's own nn.RNN, nn.GRU and nn.LSTM, in float64: the same
weights give the same outputs and the same gradients, and each gradient agrees with central differences."""
from __future__ import annotations

from typing import Iterator

import torch
from torch import nn

from core.nn.gated import GatedCell
from core.nn.verify.common import TOL_IDENTITY, TOL_REL, Result, rel_err

TORCH = {"rnn": nn.RNN, "gru": nn.GRU, "lstm": nn.LSTM}
SHAPES = ((2, 7, 3, 5), (3, 12, 5, 4))     # batch, steps, inputs, hidden


def _problem(kind: str, shape: tuple, seed: int):
    """A torch layer, the stepped cell with its weights, inputs, a starting state and the loss's weights."""
    B, T, n_in, h = shape
    torch.manual_seed(seed)
    ref = TORCH[kind](n_in, h, batch_first=True).double()
    cell = GatedCell(kind, n_in, h).double().copy_from(ref)
    X = torch.randn(B, T, n_in, dtype=torch.float64)
    h0 = torch.randn(B, h, dtype=torch.float64)
    state = (h0, torch.randn(B, h, dtype=torch.float64)) if kind == "lstm" else h0
    weights = torch.randn(B, T, h, dtype=torch.float64)     # loss = sum(weights * outputs): every output counts
    return ref, cell, X, state, weights


def _torch_state(kind: str, state):
    return tuple(s.unsqueeze(0) for s in state) if kind == "lstm" else state.unsqueeze(0)


def _loss(out: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    return (out * weights).sum()


def gated_checks() -> Iterator[Result]:
    for kind in TORCH:
        for i, shape in enumerate(SHAPES):
            ref, cell, X, state, weights = _problem(kind, shape, seed=10 + i)
            label = f"{kind.upper()} B{shape[0]} T{shape[1]} n{shape[2]} h{shape[3]}"
            Xr, Xc = X.clone().requires_grad_(), X.clone().requires_grad_()
            out_r, last_r = ref(Xr, _torch_state(kind, state))
            out_c, last_c = cell(Xc, state)
            last_r = last_r[0][0] if kind == "lstm" else last_r[0]
            last_c = last_c[0] if kind == "lstm" else last_c
            err = max(float((out_r - out_c).abs().max().detach()), float((last_r - last_c).abs().max().detach()))
            yield Result(f"gated: stepped cell (core.nn.gated) == torch nn.{TORCH[kind].__name__}, outputs and "
                         f"last h [{label}, float64]", err, TOL_IDENTITY)
            _loss(out_r, weights).backward()
            _loss(out_c, weights).backward()
            worst, where = float((Xr.grad - Xc.grad).abs().max()), "the inputs"
            for name, p in cell.named_parameters():
                e = float((getattr(ref, f"{name}_l0").grad - p.grad).abs().max())
                if e > worst:
                    worst, where = e, name
            yield Result(f"gated: autograd through the stepped cell == torch nn.{TORCH[kind].__name__}'s backward, "
                         f"every weight and the inputs [{label}, float64]", worst, TOL_IDENTITY, f"worst: {where}")
            yield _finite_differences(kind, cell, X, state, weights, label)


def _finite_differences(kind, cell, X, state, weights, label, per_param: int = 3, eps: float = 1e-6) -> Result:
    """Autograd's gradient of the stepped cell against central differences, a few entries of every weight."""
    gen = torch.Generator().manual_seed(0)
    worst, where = 0.0, ""
    for name, p in cell.named_parameters():
        for _ in range(per_param):
            k = int(torch.randint(p.numel(), (1,), generator=gen))
            flat = p.data.view(-1)
            keep = float(flat[k])
            with torch.no_grad():
                flat[k] = keep + eps
                up = float(_loss(cell(X, state)[0], weights))
                flat[k] = keep - eps
                down = float(_loss(cell(X, state)[0], weights))
                flat[k] = keep
            err = rel_err(float(p.grad.view(-1)[k]), (up - down) / (2 * eps))
            if err >= worst:
                worst, where = err, f"{name}[{k}]"
    return Result(f"gated: autograd through the stepped {kind.upper()} == central differences, {per_param} entries "
                  f"of every weight [{label}, float64]", worst, TOL_REL, f"worst at {where}")
