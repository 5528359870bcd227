"""Each implementation of the recurrence (the torch scratch loop, torch.nn.RNN, the fused RNN and its pieces)
against the float64 numpy reference: forward values, gradients, token inputs, the fused loss and the hand-written
steps."""
from __future__ import annotations

import math
from typing import Iterator

import torch

from core.nn import rnn_ref
from core.nn.models import ModelSpec, RNNLM, reference_grads
from core.nn.verify.common import (CASES, TOL_ABS, TORCH_CELLS, Result, torch_loss, torch_model, max_abs)


def forward_checks() -> Iterator[Result]:
    for case in CASES:
        params, tokens, targets, H0 = case.data()
        ref = rnn_ref.forward(params, tokens, targets, H0)
        for cell, label, _ in TORCH_CELLS:
            model = torch_model(case, cell, params)
            with torch.no_grad():
                logits, loss, _ = torch_loss(model, tokens, targets, H0)
            err = max(max_abs(ref.logits, logits.numpy()), abs(ref.loss - float(loss)))
            yield Result(f"forward: numpy reference == {label} [{case.label}]", err, TOL_ABS)


def autograd_checks() -> Iterator[Result]:
    """The numpy reference's hand-written BPTT against each torch implementation's backward pass."""
    for case in CASES:
        params, tokens, targets, H0 = case.data()
        _, grads = rnn_ref.loss_and_grads(params, tokens, targets, H0)
        for cell, _, backward in TORCH_CELLS:
            model = torch_model(case, cell, params)
            _, loss, state = torch_loss(model, tokens, targets, H0)
            loss.backward()
            auto = reference_grads(model)
            auto["H0"] = state.grad.numpy()
            for name in (*[k for k in rnn_ref.PARAM_ORDER if k in params], "H0"):
                if cell != "scratch" and name in ("W_hq", "b_q", "E"):
                    continue  # the output layer and embedding are the same code in every torch model
                yield Result(f"numpy hand-written BPTT == {backward}: d{name} [{case.label}]",
                             max_abs(grads[name], auto[name]), TOL_ABS)


def fused_checks() -> Iterator[Result]:
    """The fused CPU loop (core.nn.fused, hand-written BPTT in torch) against a plain torch.nn.RNN with the same
    weights: torch's own forward kernel and autograd."""
    from core.nn.fused import FusedRNN
    for i, (B, T, d, h, L) in enumerate(((3, 7, 5, 4, 1), (8, 20, 16, 12, 1), (1, 50, 3, 6, 1), (4, 9, 5, 7, 2),
                                         (2, 6, 3, 5, 3))):
        torch.manual_seed(i)
        fused = FusedRNN(d, h, num_layers=L, batch_first=True).double()
        plain = torch.nn.RNN(d, h, num_layers=L, batch_first=True).double()
        plain.load_state_dict(fused.state_dict())
        x = torch.randn(B, T, d, dtype=torch.float64)
        h0 = torch.randn(L, B, h, dtype=torch.float64)
        outs, grads = [], []
        for layer in (fused, plain):
            xi, hi = x.clone().requires_grad_(True), h0.clone().requires_grad_(True)
            out, hT = layer(xi, hi)
            (out.square().sum() + hT.sum()).backward()
            outs.append(out.detach())
            grads.append([xi.grad, hi.grad] + [p.grad for p in layer.parameters()])
        yield Result(f"fused CPU RNN forward == torch.nn.RNN [B={B} T={T} d={d} h={h} layers={L}]",
                     max_abs(outs[0], outs[1]), TOL_ABS)
        err = max(max_abs(a, b) for a, b in zip(*grads))
        yield Result(f"fused CPU RNN hand-written BPTT == autograd through torch.nn.RNN, inputs, state and all weights "
                     f"[B={B} T={T} d={d} h={h} layers={L}]", err, TOL_ABS)


def token_input_checks() -> Iterator[Result]:
    """The fused path for token ids (a row lookup instead of a one-hot product, gradients added back per
    token) against nn.RNN on explicit one-hot inputs: states, final state and every gradient."""
    from core.nn.fused import FusedRNN
    for i, (B, T, V, h, L) in enumerate(((3, 7, 5, 4, 1), (6, 12, 28, 9, 2), (2, 5, 300, 6, 3))):
        torch.manual_seed(100 + i)
        fused = FusedRNN(V, h, num_layers=L, batch_first=True).double()
        plain = torch.nn.RNN(V, h, num_layers=L, batch_first=True).double()
        plain.load_state_dict(fused.state_dict())
        tokens = torch.randint(0, V, (B, T))
        h0 = torch.randn(L, B, h, dtype=torch.float64)
        weights = torch.randn(B, T, h, dtype=torch.float64)
        outs, grads = [], []
        for run in (lambda s: fused.forward_tokens(tokens, s),
                    lambda s: plain(torch.nn.functional.one_hot(tokens, V).double(), s)):
            hi = h0.clone().requires_grad_(True)
            out, hT = run(hi)
            ((out * weights).sum() + hT.square().sum()).backward()
            outs.append(torch.cat([out.detach().flatten(), hT.detach().flatten()]))
            grads.append([hi.grad] + [p.grad for p in (fused if len(grads) == 0 else plain).parameters()])
        yield Result(f"fused token-id RNN forward == torch.nn.RNN on one-hot inputs [B={B} T={T} V={V} h={h} layers={L}]",
                     max_abs(outs[0], outs[1]), TOL_ABS)
        yield Result(f"fused token-id RNN gradients (state and all weights) == autograd through torch.nn.RNN "
                     f"[B={B} T={T} V={V} h={h} layers={L}]", max(max_abs(a, b) for a, b in zip(*grads)), TOL_ABS)


def linear_cross_entropy_checks() -> Iterator[Result]:
    """The lean output layer + loss of core.nn.fused against F.linear + F.cross_entropy (value and gradients)."""
    from core.nn.fused import linear_cross_entropy
    for i, (N, H, V) in enumerate(((6, 4, 5), (40, 16, 28), (3, 8, 300))):
        torch.manual_seed(i)
        h = torch.randn(N, H, dtype=torch.float64, requires_grad=True)
        w = torch.randn(V, H, dtype=torch.float64, requires_grad=True)
        b = torch.randn(V, dtype=torch.float64, requires_grad=True)
        y = torch.randint(0, V, (N,))
        ours = linear_cross_entropy(h, w, b, y)
        g1 = torch.autograd.grad(ours, (h, w, b))
        ref = torch.nn.functional.cross_entropy(torch.nn.functional.linear(h, w, b), y)
        g2 = torch.autograd.grad(ref, (h, w, b))
        err = max(abs(float(ours.detach()) - float(ref.detach())), *(max_abs(a, c) for a, c in zip(g1, g2)))
        yield Result(f"lean linear + cross-entropy == F.linear + F.cross_entropy, value and gradients [N={N} H={H} V={V}]",
                     err, TOL_ABS)


def one_function_step_checks() -> Iterator[Result]:
    """Training's single Function for one tanh layer over token ids with its output layer and loss (core.nn.fused
    token_rnn_loss): in float64 against nn.RNN on one-hot inputs + F.linear + F.cross_entropy (value, final state,
    every gradient); in float32 against the two-Function path it replaces, which must agree to the last bit."""
    from core.nn.fused import FusedRNN, linear_cross_entropy, token_rnn_loss
    for i, (B, T, V, h, dtype) in enumerate(((3, 7, 5, 4, torch.float64), (16, 12, 28, 9, torch.float64),
                                            (64, 32, 28, 32, torch.float32))):
        torch.manual_seed(200 + i)
        rnn = FusedRNN(V, h, batch_first=True).to(dtype)
        head = torch.nn.Linear(h, V).to(dtype)
        tokens, targets = torch.randint(0, V, (B, T)), torch.randint(0, V, (B, T))
        h0 = torch.randn(B, h, dtype=dtype)
        params = [rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0, rnn.bias_hh_l0, head.weight, head.bias]

        def ours():
            hi = h0.clone().requires_grad_(True)
            loss, final = token_rnn_loss(tokens, targets, rnn.weight_ih_l0, rnn.bias_ih_l0 + rnn.bias_hh_l0, hi,
                                         rnn.weight_hh_l0, head.weight, head.bias)
            return loss, final, hi

        def reference():
            hi = h0.clone().requires_grad_(True)
            if dtype == torch.float64:
                plain = torch.nn.RNN(V, h, batch_first=True).double()
                plain.load_state_dict(rnn.state_dict())
                out, hT = plain(torch.nn.functional.one_hot(tokens, V).double(), hi[None])
                loss = torch.nn.functional.cross_entropy(head(out).reshape(-1, V), targets.reshape(-1))
                return loss, hT[0], hi, list(plain.parameters())
            out, hT = rnn.forward_tokens(tokens, hi[None], time_major=True)
            loss = linear_cross_entropy(out.reshape(-1, h), head.weight, head.bias, targets.t().reshape(-1))
            return loss, hT[0], hi, params[:4]

        loss1, final1, h1 = ours()
        g1 = torch.autograd.grad(loss1, [h1, *params])
        loss2, final2, h2, rnn_params = reference()
        g2 = torch.autograd.grad(loss2, [h2, *rnn_params, head.weight, head.bias])
        err = max(abs(float(loss1.detach()) - float(loss2.detach())), max_abs(final1.detach(), final2.detach()),
                  *(max_abs(a, b) for a, b in zip(g1, g2)))
        against = ("nn.RNN on one-hot inputs + F.linear + F.cross_entropy" if dtype == torch.float64 else
                   "the two-Function path it replaces, bit for bit (float32)")
        yield Result(f"one-Function training step (tanh layer, output layer, loss) == {against}, value, final state "
                     f"and every gradient [B={B} T={T} V={V} h={h}]", err, TOL_ABS if dtype == torch.float64 else 0.0)


def hand_step_checks() -> Iterator[Result]:
    """Training's hand-differentiated step (core.nn.fused.TokenRNNStep, what RNNLM.training_loss uses on the CPU)
    against the same step through autograd (RNNLM.loss + loss.backward): the loss, the final state and every .grad
    must agree to the last bit, also when .grad already holds a gradient (it adds) and when both of nn.RNN's biases
    are trained (each gets the gradient)."""
    from core.nn.models import ModelSpec, RNNLM
    for i, (B, T, V, h, book_init, accumulate) in enumerate(((8, 5, 11, 6, False, True), (32, 32, 28, 128, True, False),
                                                             (16, 12, 28, 32, False, False))):
        torch.manual_seed(300 + i)
        nets = [RNNLM(ModelSpec(vocab_size=V, hidden_size=h, cell="rnn")) for _ in range(2)]
        nets[1].load_state_dict(nets[0].state_dict())
        tokens, targets = torch.randint(0, V, (B, T)), torch.randint(0, V, (B, T))
        state = torch.randn(1, B, h)
        outs = []
        for net, by_hand in zip(nets, (True, False)):
            if book_init:
                torch.manual_seed(400 + i)
                net.init_book()
            for p in net.parameters():
                p.grad = torch.ones_like(p) if accumulate and p.requires_grad else None
            if by_hand:
                loss, final, backward = net.training_loss(tokens, targets, state)
                took_hand_path = loss.grad_fn is None and not loss.requires_grad
                backward()
            else:
                loss, final = net.loss(tokens, targets, state)
                loss.backward()
            outs.append((loss.detach(), final.detach(), [p.grad for p in net.parameters() if p.requires_grad]))
        (l1, f1, g1), (l2, f2, g2) = outs
        err = max(abs(float(l1) - float(l2)), max_abs(f1, f2), *(max_abs(a, b) for a, b in zip(g1, g2)))
        err = err if len(g1) == len(g2) and took_hand_path else math.inf
        what = ", .grad already set" if accumulate else ", book initialisation" if book_init else ", both biases trained"
        yield Result(f"hand-differentiated training step == the same step through autograd, bit for bit (float32): "
                     f"loss, final state, every gradient [B={B} T={T} V={V} h={h}{what}]", err, 0.0)


def zero_state_checks() -> Iterator[Result]:
    """A run's windows that start from zeros pass no starting state (None), and core.nn.fused then leaves the
    state's term out of W_hh's gradient: against nn.RNN with no state (float64), dense and token inputs, every
    layer; and the hand step with no state against the same step given a tensor of zeros, bit for bit (float32)."""
    from core.nn.fused import FusedRNN
    torch.manual_seed(500)
    B, T, V, h, L = 5, 9, 13, 7, 2
    fused = FusedRNN(V, h, num_layers=L, batch_first=True).double()
    plain = torch.nn.RNN(V, h, num_layers=L, batch_first=True).double()
    plain.load_state_dict(fused.state_dict())
    tokens = torch.randint(0, V, (B, T))
    x, weights = torch.nn.functional.one_hot(tokens, V).double(), torch.randn(B, T, h, dtype=torch.float64)
    runs = {"dense inputs": lambda: fused(x), "token ids": lambda: fused.forward_tokens(tokens)}
    for what, run in runs.items():
        results = []
        for layer, go in ((fused, run), (plain, lambda: plain(x))):
            layer.zero_grad()
            out, hT = go()
            ((out * weights).sum() + hT.square().sum()).backward()
            results.append([out.detach(), hT.detach()] + [p.grad.clone() for p in layer.parameters()])
        yield Result(f"no starting state == nn.RNN with none (zeros), {what}: states, final states and every "
                     f"weight's gradient [B={B} T={T} V={V} h={h} layers={L}]",
                     max(max_abs(a, b) for a, b in zip(*results)), TOL_ABS)
    net = RNNLM(ModelSpec(vocab_size=V, hidden_size=h, cell="rnn"))
    targets, outs = torch.randint(0, V, (B, T)), []
    for state in (None, torch.zeros(1, B, h)):
        net.zero_grad(set_to_none=True)
        loss, final, backward = net.training_loss(tokens, targets, state)
        backward()
        outs.append([loss, final] + [p.grad.clone() for p in net.parameters() if p.requires_grad])
    yield Result(f"hand-differentiated step with no starting state == with a state of zeros, bit for bit (float32): "
                 f"loss, final state, every gradient [B={B} T={T} V={V} h={h}]",
                 max(max_abs(a, b) for a, b in zip(*outs)), 0.0)
