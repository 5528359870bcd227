"""Numeric proof that the RNN code is right: python -m core.verify

Each check compares two independent computations of the same numbers and passes when they agree within
its tolerance. The run ends with the line 'N passed, M failed' and exits non-zero on any failure.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np
import torch

from core import rnn_ref
from core.cells import CELLS
from core.models import ModelSpec, RNNLM, clip_gradients, detach_state, load_reference_params, perplexity, reference_grads

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


def _torch_model(case: Case, cell: str, params) -> RNNLM:
    torch.manual_seed(0)
    model = RNNLM(ModelSpec(case.V, case.h, cell, case.d or 0)).double()
    return load_reference_params(model, params)


def _torch_loss(model: RNNLM, tokens, targets, H0):
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
    ("scratch", "the torch scratch loop (core.cells.ScratchRNN)", "autograd through the torch scratch loop"),
    ("torch", "torch.nn.RNN (torch's own kernel)", "autograd through torch.nn.RNN (torch's own backward)"),
    ("rnn", "the fused RNN (core.fused)", "the fused RNN's hand-written backward (core.fused)"),
)


def forward_checks() -> Iterator[Result]:
    for case in CASES:
        params, tokens, targets, H0 = case.data()
        ref = rnn_ref.forward(params, tokens, targets, H0)
        for cell, label, _ in TORCH_CELLS:
            model = _torch_model(case, cell, params)
            with torch.no_grad():
                logits, loss, _ = _torch_loss(model, tokens, targets, H0)
            err = max(max_abs(ref.logits, logits.numpy()), abs(ref.loss - float(loss)))
            yield Result(f"forward: numpy reference == {label} [{case.label}]", err, TOL_ABS)


def autograd_checks() -> Iterator[Result]:
    """The numpy reference's hand-written BPTT against each torch implementation's backward pass."""
    for case in CASES:
        params, tokens, targets, H0 = case.data()
        _, grads = rnn_ref.loss_and_grads(params, tokens, targets, H0)
        for cell, _, backward in TORCH_CELLS:
            model = _torch_model(case, cell, params)
            _, loss, state = _torch_loss(model, tokens, targets, H0)
            loss.backward()
            auto = reference_grads(model)
            auto["H0"] = state.grad.numpy()
            for name in (*[k for k in rnn_ref.PARAM_ORDER if k in params], "H0"):
                if cell != "scratch" and name in ("W_hq", "b_q", "E"):
                    continue  # the output layer and embedding are the same code in every torch model
                yield Result(f"numpy hand-written BPTT == {backward}: d{name} [{case.label}]",
                             max_abs(grads[name], auto[name]), TOL_ABS)


def fused_checks() -> Iterator[Result]:
    """The fused CPU loop (core.fused, hand-written BPTT in torch) against a plain torch.nn.RNN with the same
    weights: torch's own forward kernel and autograd."""
    from core.fused import FusedRNN
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
    from core.fused import FusedRNN
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
    """The lean output layer + loss of core.fused against F.linear + F.cross_entropy (value and gradients)."""
    from core.fused import linear_cross_entropy
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
    """Training's single Function for one tanh layer over token ids with its output layer and loss (core.fused
    token_rnn_loss): in float64 against nn.RNN on one-hot inputs + F.linear + F.cross_entropy (value, final state,
    every gradient); in float32 against the two-Function path it replaces, which must agree to the last bit."""
    from core.fused import FusedRNN, linear_cross_entropy, token_rnn_loss
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
    """Training's hand-differentiated step (core.fused.TokenRNNStep, what RNNLM.training_loss uses on the CPU)
    against the same step through autograd (RNNLM.loss + loss.backward): the loss, the final state and every .grad
    must agree to the last bit, also when .grad already holds a gradient (it adds) and when both of nn.RNN's biases
    are trained (each gets the gradient)."""
    from core.models import ModelSpec, RNNLM
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
    """A run's windows that start from zeros pass no starting state (None), and core.fused then leaves the
    state's term out of W_hh's gradient: against nn.RNN with no state (float64), dense and token inputs, every
    layer; and the hand step with no state against the same step given a tensor of zeros, bit for bit (float32)."""
    from core.fused import FusedRNN
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


def finite_difference_checks(per_param: int = 3) -> Iterator[Result]:
    for case in CASES:
        params, tokens, targets, H0 = case.data()
        _, grads = rnn_ref.loss_and_grads(params, tokens, targets, H0)
        rng = np.random.default_rng(case.seed)
        worst, where = 0.0, ""
        for name in (*[k for k in rnn_ref.PARAM_ORDER if k in params], "H0"):
            shape = grads[name].shape
            for _ in range(per_param):
                idx = tuple(int(rng.integers(0, n)) for n in shape)
                numeric = rnn_ref.finite_difference(params, tokens, targets, name, idx, H0=H0)
                err = rel_err(grads[name][idx], numeric)
                if err >= worst:
                    worst, where = err, f"{name}{list(idx)}"
        yield Result(f"BPTT == central differences, {per_param} entries of every parameter "
                     f"[{case.label}]", worst, TOL_REL, f"worst at {where}")


def concat_checks() -> Iterator[Result]:
    shapes = (((3, 1), (1, 4), (3, 4), (4, 4)), ((5, 7), (7, 3), (5, 3), (3, 3)), ((2, 28), (28, 32), (2, 32), (32, 32)))
    for i, (sx, sw, sh, shh) in enumerate(shapes):
        rng = np.random.default_rng(i)
        X, W_xh, H, W_hh = (rng.standard_normal(s) for s in (sx, sw, sh, shh))
        two, one = rnn_ref.two_products_or_one(X, W_xh, H, W_hh)
        yield Result(f"[X, H] @ [W_xh; W_hh] == X W_xh + H W_hh, X{sx} W_xh{sw} H{sh} W_hh{shh}",
                     max_abs(one, two), TOL_IDENTITY)


def clipping_checks() -> Iterator[Result]:
    for i, (theta, scale) in enumerate(((1.0, 10.0), (0.5, 3.0), (5.0, 100.0))):
        torch.manual_seed(i)
        ps = [torch.nn.Parameter(torch.zeros(s, dtype=torch.float64)) for s in ((4, 3), (7,), (2, 2, 2))]
        for p in ps:
            p.grad = torch.randn_like(p) * scale
        before = math.sqrt(sum(float((p.grad ** 2).sum()) for p in ps))
        reported = clip_gradients(ps, theta)
        after = math.sqrt(sum(float((p.grad ** 2).sum()) for p in ps))
        yield Result(f"clipping at theta={theta} gives norm theta (norm before {before:.3g})",
                     max(abs(after - theta), abs(reported - before)), TOL_IDENTITY)
    ps = [torch.nn.Parameter(torch.zeros(3, dtype=torch.float64))]
    ps[0].grad = torch.tensor([0.1, 0.2, 0.2], dtype=torch.float64)
    clip_gradients(ps, 1.0)
    yield Result("clipping leaves a gradient below theta unchanged", max_abs(ps[0].grad.numpy(), [0.1, 0.2, 0.2]), 0.0)


def uniform_perplexity_checks() -> Iterator[Result]:
    for V in (2, 28, 1024):
        logits = torch.zeros(3, 5, V, dtype=torch.float64)
        targets = torch.randint(0, V, (3, 5))
        ce = torch.nn.functional.cross_entropy(logits.reshape(-1, V), targets.reshape(-1))
        yield Result(f"a uniform model over {V} tokens has perplexity {V}", abs(perplexity(float(ce)) - V) / V,
                     TOL_IDENTITY)


def truncation_checks() -> Iterator[Result]:
    for cell in CELLS:   # every cell of the registry
        torch.manual_seed(0)
        model = RNNLM(ModelSpec(9, 6, cell, 4)).double()
        tokens = torch.randint(0, 9, (2, 10))
        logits1, state = model(tokens[:, :5])
        state = detach_state(state)
        logits2, _ = model(tokens[:, 5:], state)
        # The gradient of window 2's loss w.r.t. window 1's outputs must be zero once the state is detached.
        g = torch.autograd.grad(logits2.sum(), logits1, allow_unused=True)[0]
        err = 0.0 if g is None else float(g.abs().max())
        yield Result(f"detached state stops the gradient at the window edge ({cell})", err, 0.0)


def long_sequence_checks() -> Iterator[Result]:
    case = Case(B=2, T=200, V=10, h=8, d=None, seed=5)
    params, tokens, targets, H0 = case.data()
    _, grads = rnn_ref.loss_and_grads(params, tokens, targets, H0)
    finite = all(np.all(np.isfinite(g)) for g in grads.values())
    yield Result("gradients stay finite over 200 steps", 0.0 if finite else math.inf, 0.0)


GROUPS: dict[str, Callable[[], Iterator[Result]]] = {
    "forward": forward_checks,
    "autograd": autograd_checks,
    "finite differences": finite_difference_checks,
    "fused": fused_checks,
    "token inputs": token_input_checks,
    "linear cross-entropy": linear_cross_entropy_checks,
    "one-Function step": one_function_step_checks,
    "hand-differentiated step": hand_step_checks,
    "zero starting state": zero_state_checks,
    "concatenation": concat_checks,
    "clipping": clipping_checks,
    "perplexity": uniform_perplexity_checks,
    "truncation": truncation_checks,
    "long sequences": long_sequence_checks,
}


def run_checks() -> list[Result]:
    return [r for group in GROUPS.values() for r in group()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.verify", description=__doc__.splitlines()[0])
    parser.add_argument("-q", "--quiet", action="store_true", help="print failures and the summary only")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    results = run_checks()
    for r in results:
        if not args.quiet or not r.passed:
            mark = "PASS" if r.passed else "FAIL"
            print(f"{mark}  {r.name}: error {r.error:.2e} (tolerance {r.tolerance:.0e}){'  ' + r.detail if r.detail else ''}")
    passed = sum(r.passed for r in results)
    failed = len(results) - passed
    print(f"({time.perf_counter() - t0:.1f} s)")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
