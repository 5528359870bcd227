"""A fused tanh RNN for the CPU: the time loop with as few operations per step as possible and a
hand-written backward pass through time, as torch.autograd.Functions (layer after layer).

On a small CPU the per-operation overhead of a generic RNN dominates (dozens of tiny kernels per time
step). Here the forward pass is one in-place addmm and one in-place sigmoid per step (tanh written through the
sigmoid, see _recur), the backward pass three small operations per step (h², then two in place), and the weight
gradients are single large matrix products over all steps.
With one-hot inputs the first layer looks its input projections up by token id, and training one such layer
runs as a single Function with the output layer and loss (token_rnn_loss), so no gradient is copied between them.
core.nn.verify checks it against nn.RNN's autograd to 1e-6 in float64, and the single Function against the
layer-and-loss path bit for bit.
"""
from __future__ import annotations

import torch
from torch import nn

from core.nn.interrupt import poll


def _doubled(xw: torch.Tensor, w_hh: torch.Tensor) -> torch.Tensor:
    """The loop's input for input projections xw (T, B, h): 2 xw_0 at the first step, and 2 xw_t - 2 (1 W_hh^T)
    after it (see _recur). One pass; the first row is exactly twice xw_0."""
    hs = torch.add(w_hh.sum(1).mul_(-2.0), xw, alpha=2.0)
    torch.mul(xw[0], 2.0, out=hs[0])
    return hs


def _recur(hs: torch.Tensor, h0: torch.Tensor | None, w_hh: torch.Tensor) -> torch.Tensor:
    """In place: hs holds the loop's input from _doubled (T, B, h) on entry and the states on exit; h0 None is
    the zero state. The step is H_t = tanh(A_t) with A_t = xw_t + H_{t-1} W_hh^T, computed as 2 S_t - 1 with
    S_t = sigmoid(2 A_t): torch's CPU tanh is several times slower than its sigmoid on some CPUs (it goes
    through MKL's vector maths, which takes a slow path on AMD processors). With H = 2S - 1 the doubled
    pre-activation is 2 A_t = (2 xw_t - 2 (1 W_hh^T)) + S_{t-1} (4 W_hh^T): still one product and one
    activation a step, and the scalings by 2 and 4 are exact. After the loop one pass turns S into H.
    W_hh^T is copied into its own contiguous matrix: the product with a transposed view is slower (15% of this
    loop at 32 x 128)."""
    w4 = w_hh.t().mul(4.0).contiguous()                    # exactly 4 W_hh^T, in its own contiguous matrix
    rows = hs.unbind(0)                                    # views of the time steps, made in one call
    if h0 is not None:
        rows[0].addmm_(h0, w4, alpha=0.5)                  # 2 A_0 = 2 xw_0 + h0 (2 W_hh^T)
    s = rows[0].sigmoid_()
    for t in range(1, len(rows)):
        if t % 8 == 0:
            poll()                                         # a Stop lands within a few steps (core.nn.interrupt)
        s = rows[t].addmm_(s, w4).sigmoid_()
    return torch.add(hs.new_full((), -1.0), hs, alpha=2.0, out=hs)   # H = 2 S - 1 in one pass (2 S is exact)


SMALL_STATES = 1 << 18   # states of up to 2^18 numbers (T x B x h; 1 MiB in float32): all squares in one operation


def _squares(hs: torch.Tensor):
    """H_t^2 for t = 0..T-1 (a sequence of (B, h) tensors). Small states: all T in one operation, which saves an
    operation per step; large ones (the book's 1,024 x 32): step by step into one buffer that stays in the cache,
    which saves a pass through memory. The same numbers either way."""
    if hs.numel() <= SMALL_STATES:
        yield from torch.mul(hs, hs).unbind(0)[::-1]
        return
    sq = torch.empty_like(hs[0])
    for state in reversed(hs.unbind(0)):
        yield torch.mul(state, state, out=sq)


def _backprop(d_hs: torch.Tensor, hs: torch.Tensor, h0: torch.Tensor | None, w_hh: torch.Tensor, owned: bool = False,
              want_d_h0: bool = True):
    """Backward through time. Returns dA (T, B, h), the gradients of the pre-activations, and those of h0
    (None unless wanted) and W_hh. dA is built in place in d_hs (owned: the caller's own buffer) or else in a
    copy of it: row t first collects dL/dH_t (from the output at t and from step t+1), then becomes
    dA_t = dL/dH_t * (1 - H_t^2). A zero first state (h0 None) adds nothing to W_hh's gradient: its product is
    left out (at the book's 1,024 x 32, one matrix product and one sum fewer per step)."""
    T, hdim = hs.shape[0], hs.shape[-1]
    d_a = d_hs if owned else d_hs.clone(memory_format=torch.contiguous_format)
    rows = d_a.unbind(0)
    for t, sq in zip(range(T - 1, -1, -1), _squares(hs)):
        if t % 8 == 0:
            poll()
        rows[t].addcmul_(rows[t], sq, value=-1.0)          # dA_t = g * (1 - H_t^2)  (tanh' = 1 - h^2)
        if t:
            rows[t - 1].addmm_(rows[t], w_hh)              # dL/dH_{t-1} += dA_t W_hh
    d_h0 = d_a[0] @ w_hh if want_d_h0 else None
    d_w_hh = d_a[1:].reshape(-1, hdim).t() @ hs[:-1].reshape(-1, hdim)
    if h0 is not None:
        d_w_hh = d_w_hh + d_a[0].t() @ h0
    return d_a, d_h0, d_w_hh


def token_states(ids: torch.Tensor, w_ih: torch.Tensor, bias: torch.Tensor, h0: torch.Tensor, w_hh: torch.Tensor):
    """Layer 0 over one-hot tokens given as ids (T, B): X_t W_ih^T + b is row ids[t] of (W_ih^T + b), a lookup
    (of _doubled's rows, from a doubled table). Returns the flat ids and all states (T, B, h)."""
    flat, batch = ids.reshape(-1), ids.shape[1]
    table = (w_ih.t() + bias).contiguous().mul_(2.0)   # (V, h), one row per token: 2 xw for a token
    hs = table.new_empty(flat.shape[0], table.shape[1])
    torch.index_select(table, 0, flat[:batch], out=hs[:batch])                       # the first step: 2 xw
    torch.index_select(table.sub_(w_hh.sum(1).mul_(2.0)), 0, flat[batch:], out=hs[batch:])   # 2 xw - 2 (1 W^T)
    return flat, _recur(hs.view(*ids.shape, -1), h0, w_hh)


def _token_grads(d_a: torch.Tensor, flat: torch.Tensor, vocab: int):
    """The lookup table's gradient (each dA_t row added into the row of its token), as W_ih's and the bias's."""
    d_table = d_a.new_zeros(vocab, d_a.shape[-1]).index_add_(0, flat, d_a.view(-1, d_a.shape[-1]))
    return d_table.t(), d_table.sum(0)


class _TanhRNN(torch.autograd.Function):
    @staticmethod
    def forward(ctx, xw: torch.Tensor, h0: torch.Tensor | None, w_hh: torch.Tensor) -> torch.Tensor:
        """xw: (T, B, h) input projections with both biases added; h0: (B, h), or None for zeros; w_hh: (h, h) as
        in nn.RNN (the step is H_t = tanh(xw_t + H_{t-1} w_hh^T)). Returns all states (T, B, h)."""
        hs = _recur(_doubled(xw, w_hh), h0, w_hh)
        ctx.save_for_backward(hs, h0, w_hh)
        return hs

    @staticmethod
    def backward(ctx, d_hs: torch.Tensor):
        hs, h0, w_hh = ctx.saved_tensors
        return _backprop(d_hs, hs, h0, w_hh, want_d_h0=ctx.needs_input_grad[1])


class _TokenTanhRNN(torch.autograd.Function):
    """The first layer with one-hot inputs given as token ids: a lookup instead of a product (token_states)."""

    @staticmethod
    def forward(ctx, ids: torch.Tensor, w_ih: torch.Tensor, bias: torch.Tensor, h0: torch.Tensor | None,
                w_hh: torch.Tensor) -> torch.Tensor:
        """ids: (T, B) time-major token ids; w_ih: (h, V); bias: (h,) the sum of both biases; h0 None: zeros."""
        flat, hs = token_states(ids, w_ih, bias, h0, w_hh)
        ctx.save_for_backward(flat, hs, h0, w_hh)
        ctx.vocab = w_ih.shape[1]
        return hs

    @staticmethod
    def backward(ctx, d_hs: torch.Tensor):
        flat, hs, h0, w_hh = ctx.saved_tensors
        d_a, d_h0, d_w_hh = _backprop(d_hs, hs, h0, w_hh, want_d_h0=ctx.needs_input_grad[3])
        return None, *_token_grads(d_a, flat, ctx.vocab), d_h0, d_w_hh


class TokenRNNLoss(torch.autograd.Function):
    """Training's whole step for one tanh layer over one-hot tokens: the states, the output layer and the mean
    cross-entropy in one Function. Its backward pass writes the output layer's gradient straight into the buffer
    the pass through time then works in, instead of handing it over (and copying it) between two Functions.
    The same arithmetic as _TokenTanhRNN followed by _LinearCrossEntropy, number for number (core.nn.verify)."""

    @staticmethod
    def forward(ctx, ids, targets, w_ih, bias, h0, w_hh, head_w, head_b):
        """ids, targets: (T, B) time-major; h0 None: the zero state. Returns the mean loss and the final state
        (not differentiable)."""
        flat, hs = token_states(ids, w_ih, bias, h0, w_hh)
        logp = log_probs_t(hs.view(-1, hs.shape[-1]), head_w, head_b)
        at = target_positions(targets.reshape(-1))
        ctx.save_for_backward(flat, hs, h0, w_hh, head_w, at, logp)
        ctx.vocab = w_ih.shape[1]
        final = hs[-1].clone()
        ctx.mark_non_differentiable(final)
        return -logp.take(at).mean(), final

    @staticmethod
    def backward(ctx, grad, _d_final):
        flat, hs, h0, w_hh, head_w, at, logp = ctx.saved_tensors
        h = hs.view(-1, hs.shape[-1])
        d_h, d_w, d_b = _softmax_grads(grad, h, head_w, at, logp)
        d_a, d_h0, d_w_hh = _backprop(d_h.view_as(hs), hs, h0, w_hh, owned=True, want_d_h0=ctx.needs_input_grad[4])
        return None, None, *_token_grads(d_a, flat, ctx.vocab), d_h0, d_w_hh, d_w, d_b


def token_rnn_loss(ids: torch.Tensor, targets: torch.Tensor, w_ih, bias, h0, w_hh, head_w, head_b):
    """(mean cross-entropy, final state) of one tanh layer and its output layer over token ids (batch, time)."""
    return TokenRNNLoss.apply(ids.t(), targets.t(), w_ih, bias, h0, w_hh, head_w, head_b)


class Saved:
    """The part of an autograd context that TokenRNNLoss uses, for calling it without autograd. The hand step
    never differentiates its starting state (it is the last window's, detached, or zeros)."""

    needs_input_grad = (False,) * 8

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors

    def mark_non_differentiable(self, *tensors):
        pass


class TokenRNNStep:
    """A training step of one tanh layer over token ids with its output layer and mean loss, differentiated by
    hand: TokenRNNLoss's own forward and backward called directly, so the step builds no autograd graph and
    the gradients go straight into the parameters' .grad (no engine, no gradient accumulation pass). Same
    numbers as token_rnn_loss + loss.backward(), bit for bit (core.nn.verify); about 7% of a 128-unit step.

    params: (w_ih, b_ih, b_hh, w_hh, head_w, head_b), as nn.RNN and nn.Linear hold them."""

    def __init__(self, ids: torch.Tensor, targets: torch.Tensor, h0: torch.Tensor | None, params):
        self.params = params
        w_ih, b_ih, b_hh, w_hh, head_w, head_b = params
        self.ctx = Saved()
        with torch.no_grad():
            self.loss, self.final = TokenRNNLoss.forward(self.ctx, ids.t(), targets.t(), w_ih, b_ih + b_hh,
                                                          None if h0 is None else h0.detach(), w_hh, head_w, head_b)

    def backward(self) -> None:
        """Adds the loss's gradient into .grad of every parameter that requires one (as loss.backward() does)."""
        with torch.no_grad():
            _, _, d_w_ih, d_bias, _, d_w_hh, d_w, d_b = TokenRNNLoss.backward(self.ctx, 1.0, None)
        self.ctx = None                                    # a step is differentiated once
        put_grads(self.params, (d_w_ih, d_bias, d_w_hh, d_w, d_b))


def put_grads(params, grads) -> None:
    """Add grads (W_ih, the summed bias, W_hh, the output weight and bias) into .grad of params (w_ih, b_ih, b_hh,
    w_hh, head_w, head_b) where they require one: each hidden bias gets the summed bias's gradient."""
    d_w_ih, d_bias, d_w_hh, d_w, d_b = grads
    both = params[1].requires_grad and params[2].requires_grad   # each bias then gets its own copy
    for p, g in zip(params, (d_w_ih, d_bias, d_bias.clone() if both else d_bias, d_w_hh, d_w, d_b)):
        if p.requires_grad:
            if p.grad is None:
                p.grad = g.contiguous()
            else:
                p.grad.add_(g)


class FusedRNN(nn.RNN):
    """nn.RNN (same parameters, same state dict) that runs tanh RNNs on the CPU through the fused loop above,
    layer after layer (with nn.RNN's dropout between layers); on a GPU it is nn.RNN itself (cuDNN)."""

    def uses_fused(self, x: torch.Tensor) -> bool:
        return (x.device.type == "cpu" and not self.bidirectional and self.nonlinearity == "tanh"
                and self.bias and self.batch_first)

    def _upper_layers(self, hs: torch.Tensor, state: torch.Tensor | None, finals: list, time_major: bool):
        """Layers 1.. on top of layer 0's states hs (T, B, h), with nn.RNN's dropout between layers."""
        for k in range(1, self.num_layers):
            below = hs
            if self.dropout and self.training:
                below = nn.functional.dropout(below, self.dropout, training=True)
            xw = torch.addmm(getattr(self, f"bias_ih_l{k}") + getattr(self, f"bias_hh_l{k}"),
                             below.reshape(-1, self.hidden_size), getattr(self, f"weight_ih_l{k}").t())
            h0 = state[k] if state is not None else None
            hs = _TanhRNN.apply(xw.view_as(hs), h0, getattr(self, f"weight_hh_l{k}"))
            finals.append(hs[-1])
        return (hs if time_major else hs.transpose(0, 1)), torch.stack(finals)

    def forward(self, x, hx=None):
        if not isinstance(x, torch.Tensor) or not self.uses_fused(x):
            return super().forward(x, hx)
        xw = x.transpose(0, 1) @ self.weight_ih_l0.t() + (self.bias_ih_l0 + self.bias_hh_l0)
        h0 = hx[0] if hx is not None else None
        hs = _TanhRNN.apply(xw, h0, self.weight_hh_l0)
        return self._upper_layers(hs, hx, [hs[-1]], time_major=False)

    def forward_tokens(self, tokens: torch.Tensor, hx=None, time_major: bool = False):
        """One-hot inputs given as ids (batch, time): layer 0 looks its input projections up by token."""
        h0 = hx[0] if hx is not None else None
        hs = _TokenTanhRNN.apply(tokens.t(), self.weight_ih_l0, self.bias_ih_l0 + self.bias_hh_l0, h0,
                                 self.weight_hh_l0)
        return self._upper_layers(hs, hx, [hs[-1]], time_major)


def _logits_t(h: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """(h W^T + b)^T, shape (V, N). Vocabulary-major: with a small vocabulary, the softmax's reductions then
    run across rows with every position in a contiguous vector, instead of over rows of only V numbers. The
    product comes first and the bias is added in place (addmm would first copy the bias into every column)."""
    return torch.mm(weight, h.t()).add_(bias.unsqueeze(1))


def log_probs_t(h: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """log_softmax of _logits_t over the vocabulary. On the CPU it is written over the logits: the same numbers
    as into a new tensor (its kernel reads each column before writing it), without a second (V, N) tensor to fill."""
    logits = _logits_t(h, weight, bias)
    return torch.log_softmax(logits, dim=0, out=logits) if logits.device.type == "cpu" else logits.log_softmax(0)


_COLUMNS: dict = {}   # (N, device) -> arange(N), read-only: the few sizes a run uses (its batches, validation chunks)
_COLUMNS_KEPT = 1 << 21   # at most this many numbers kept in all (16 MiB of int64)


def target_positions(targets: torch.Tensor) -> torch.Tensor:
    """Where each target's entry sits in a flattened (V, N) vocabulary-major tensor: target * N + column.
    take/put_ at these positions read or change one entry per column, faster than gather/scatter along dim 0."""
    n = targets.shape[0]
    key = (n, targets.device)
    columns = _COLUMNS.get(key)
    if columns is None:
        columns = torch.arange(n, device=targets.device)
        if sum(c.numel() for c in list(_COLUMNS.values())) + n > _COLUMNS_KEPT:   # list: another run may add one
            _COLUMNS.clear()
        if n <= _COLUMNS_KEPT:
            _COLUMNS[key] = columns
    return torch.add(columns, targets, alpha=n)


class _LinearCrossEntropy(torch.autograd.Function):
    """Mean cross-entropy of softmax(h W^T + b) against targets. The backward pass turns the saved
    log-probabilities into the softmax gradient directly (exp in place, minus one at each target, scale)
    instead of building a separate one-hot gradient and a log-softmax gradient: fewer passes over the
    largest tensor of a training step."""

    @staticmethod
    def forward(ctx, h, weight, bias, targets):
        logp = log_probs_t(h, weight, bias)
        at = target_positions(targets)
        ctx.save_for_backward(h, weight, at, logp)
        return -logp.take(at).mean()

    @staticmethod
    def backward(ctx, grad):
        h, weight, at, logp = ctx.saved_tensors
        return *_softmax_grads(grad, h, weight, at, logp), None


def _softmax_grads(grad: torch.Tensor, h: torch.Tensor, weight: torch.Tensor, at: torch.Tensor, logp: torch.Tensor):
    """The gradients of the mean cross-entropy for h, the output weight and its bias, from the saved
    log-probabilities (overwritten: they become the softmax minus the one-hot targets)."""
    n = h.shape[0]
    p = logp.exp_()                                                    # softmax (V, N), in place
    p.put_(at, p.take(at).sub_(1.0))                                   # minus the one-hot target (one per column)
    # The 1/n of the mean (times the incoming gradient) rides along as the products' alpha, and the bias
    # gradient (the row sums of p) is a matrix-vector product: both cheaper than passes over p.
    scale, zero = float(grad) / n, p.new_zeros(())
    d_h = torch.addmm(zero, p.t(), weight, beta=0, alpha=scale)
    d_w = torch.addmm(zero, p, h, beta=0, alpha=scale)
    d_b = torch.mv(p, p.new_full((n,), scale))
    return d_h, d_w, d_b


def linear_cross_entropy(h: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, targets: torch.Tensor,
                         reduction: str = "mean") -> torch.Tensor:
    """F.cross_entropy(F.linear(h, weight, bias), targets) for h (N, H), computed leaner (see above)."""
    if reduction not in ("mean", "sum"):
        raise ValueError("reduction must be 'mean' or 'sum'.")
    if torch.is_grad_enabled() and (h.requires_grad or weight.requires_grad or bias.requires_grad):
        loss = _LinearCrossEntropy.apply(h, weight, bias, targets)
        return loss if reduction == "mean" else loss * h.shape[0]
    logp = log_probs_t(h, weight, bias)
    picked = logp.take(target_positions(targets))
    return -(picked.mean() if reduction == "mean" else picked.sum())


def block_step(ids: torch.Tensor, targets: torch.Tensor, params, weight: float):
    """One block of a batch (core.nn.blocks): its mean cross-entropy and the gradients of weight x that loss, for
    (W_ih, the summed bias, W_hh, the output weight, its bias). ids, targets: (T, b) time-major; params as nn.RNN
    and nn.Linear hold them."""
    w_ih, b_ih, b_hh, w_hh, head_w, head_b = params
    ctx = Saved()
    with torch.no_grad():
        loss, _ = TokenRNNLoss.forward(ctx, ids, targets, w_ih, b_ih + b_hh, None, w_hh, head_w, head_b)
        _, _, d_w_ih, d_bias, _, d_w_hh, d_w, d_b = TokenRNNLoss.backward(ctx, weight, None)
    return float(loss), (d_w_ih, d_bias, d_w_hh, d_w, d_b)


def block_loss_sum(ids: torch.Tensor, targets: torch.Tensor, params) -> float:
    """The summed cross-entropy of one block from zero states (validation), as RNNLM.loss(reduction='sum')."""
    w_ih, b_ih, b_hh, w_hh, head_w, head_b = params
    with torch.inference_mode():
        _, hs = token_states(ids, w_ih, b_ih + b_hh, None, w_hh)
        logp = log_probs_t(hs.view(-1, hs.shape[-1]), head_w, head_b)
        return -float(logp.take(target_positions(targets.reshape(-1))).sum())
