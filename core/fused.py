"""A fused one-layer tanh RNN for the CPU: the time loop with as few operations per step as possible and
a hand-written backward pass through time, as a torch.autograd.Function.

On a small CPU the per-operation overhead of a generic RNN dominates (dozens of tiny kernels per time
step). Here the forward pass is one addmm and one in-place tanh per step, the backward pass three small
operations per step, and the weight gradients are single large matrix products over all steps.
core.verify checks it against nn.RNN's autograd to 1e-6 in float64.
"""
from __future__ import annotations

import torch
from torch import nn


class _TanhRNN(torch.autograd.Function):
    @staticmethod
    def forward(ctx, xw: torch.Tensor, h0: torch.Tensor, w_hh: torch.Tensor) -> torch.Tensor:
        """xw: (T, B, h) input projections with both biases added; h0: (B, h); w_hh: (h, h) as in nn.RNN
        (the step is H_t = tanh(xw_t + H_{t-1} w_hh^T)). Returns all states (T, B, h)."""
        T = xw.shape[0]
        hs = torch.empty_like(xw)
        w_t = w_hh.t()
        h = h0
        for t in range(T):
            h = torch.addmm(xw[t], h, w_t, out=hs[t]).tanh_()
        ctx.save_for_backward(hs, h0, w_hh)
        return hs

    @staticmethod
    def backward(ctx, d_hs: torch.Tensor):
        hs, h0, w_hh = ctx.saved_tensors
        T, hdim = hs.shape[0], hs.shape[-1]
        d_hs = d_hs.contiguous()
        hs2 = hs * hs                                      # tanh' = 1 - h^2, for every step at once
        d_a = torch.empty_like(hs)
        g = d_hs[T - 1]                                    # dL/dH_t: from the output at t, and from step t+1
        for t in range(T - 1, -1, -1):
            torch.addcmul(g, g, hs2[t], value=-1.0, out=d_a[t])   # dA_t = g * (1 - H_t^2)
            if t:
                g = torch.addmm(d_hs[t - 1], d_a[t], w_hh)         # dL/dH_{t-1} = out_{t-1} + dA_t W_hh
        d_h0 = d_a[0] @ w_hh
        flat = d_a[1:].reshape(-1, hdim)
        d_w_hh = flat.t() @ hs[:-1].reshape(-1, hdim) + d_a[0].t() @ h0
        return d_a, d_h0, d_w_hh


class FusedRNN(nn.RNN):
    """nn.RNN (same parameters, same state dict) that runs tanh RNNs on the CPU through the fused loop above,
    layer after layer (with nn.RNN's dropout between layers); on a GPU it is nn.RNN itself (cuDNN)."""

    def uses_fused(self, x: torch.Tensor) -> bool:
        return (x.device.type == "cpu" and not self.bidirectional and self.nonlinearity == "tanh"
                and self.bias and self.batch_first)

    def run_projected(self, xw: torch.Tensor, state: torch.Tensor | None, biased: bool = False,
                      time_major: bool = False):
        """xw: (T, B, h) time-major input projections of layer 0 (biases included when biased=True).
        Returns outputs (B, T, h) of the top layer ((T, B, h) with time_major) and the state (num_layers, B, h)."""
        B = xw.shape[1]
        finals, hs = [], xw
        for k in range(self.num_layers):
            if k:
                below = hs
                if self.dropout and self.training:
                    below = nn.functional.dropout(below, self.dropout, training=True)
                xw = below @ getattr(self, f"weight_ih_l{k}").t()
            h0 = state[k] if state is not None else xw.new_zeros(B, self.hidden_size)
            if k or not biased:
                xw = xw + (getattr(self, f"bias_ih_l{k}") + getattr(self, f"bias_hh_l{k}"))
            hs = _TanhRNN.apply(xw, h0, getattr(self, f"weight_hh_l{k}"))
            finals.append(hs[-1])
        return (hs if time_major else hs.transpose(0, 1)), torch.stack(finals)

    def forward(self, x, hx=None):
        if not isinstance(x, torch.Tensor) or not self.uses_fused(x):
            return super().forward(x, hx)
        return self.run_projected(x.transpose(0, 1) @ self.weight_ih_l0.t(), hx)

    def forward_tokens(self, tokens: torch.Tensor, hx=None, time_major: bool = False):
        """One-hot inputs given as ids. For a small vocabulary the one-hot matrix product is fastest on a CPU
        (its backward is one more product); for a large one, X W_ih^T is the row lookup W_ih^T[ids]."""
        w = self.weight_ih_l0
        V = w.shape[1]
        if V <= 64:
            # One-hot with an extra constant column: [onehot(x), 1] @ [W_ih^T; b] adds the bias inside the same
            # product, and its backward yields the weight and bias gradients in one product too.
            ids = tokens.t().unsqueeze(-1)
            one_hot = torch.zeros(*ids.shape[:2], V + 1, dtype=w.dtype, device=w.device).scatter_(2, ids, 1.0)
            one_hot[..., V] = 1.0
            table = torch.cat([w.t(), (self.bias_ih_l0 + self.bias_hh_l0).unsqueeze(0)])
            return self.run_projected(one_hot @ table, hx, biased=True, time_major=time_major)
        return self.run_projected(nn.functional.embedding(tokens.t(), w.t()), hx, time_major=time_major)


class _LinearCrossEntropy(torch.autograd.Function):
    """Mean cross-entropy of softmax(h W^T + b) against targets. The backward pass turns the saved
    log-probabilities into the softmax gradient directly (exp, minus one at each target, scale) instead of
    building a separate one-hot gradient and a log-softmax gradient: fewer passes over the largest tensor
    of a training step."""

    @staticmethod
    def forward(ctx, h, weight, bias, targets):
        logp = torch.log_softmax(torch.addmm(bias, h, weight.t()), dim=1)
        ctx.save_for_backward(h, weight, targets, logp)
        return -logp.gather(1, targets.unsqueeze(1)).mean()

    @staticmethod
    def backward(ctx, grad):
        h, weight, targets, logp = ctx.saved_tensors
        n = h.shape[0]
        p = logp.exp()                                                     # softmax
        p.scatter_add_(1, targets.unsqueeze(1), p.new_full((n, 1), -1.0))  # minus the one-hot target
        p.mul_(grad / n)
        return p @ weight, p.t() @ h, p.sum(0), None


def linear_cross_entropy(h: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, targets: torch.Tensor,
                         reduction: str = "mean") -> torch.Tensor:
    """F.cross_entropy(F.linear(h, weight, bias), targets) for h (N, H), computed leaner (see above)."""
    if reduction not in ("mean", "sum"):
        raise ValueError("reduction must be 'mean' or 'sum'.")
    if torch.is_grad_enabled() and (h.requires_grad or weight.requires_grad or bias.requires_grad):
        loss = _LinearCrossEntropy.apply(h, weight, bias, targets)
        return loss if reduction == "mean" else loss * h.shape[0]
    logp = torch.log_softmax(torch.addmm(bias, h, weight.t()), dim=1)
    picked = logp.gather(1, targets.unsqueeze(1))
    return -(picked.mean() if reduction == "mean" else picked.sum())
