"""The maths itself: the reference's gradients against finite differences, and identities the chapter relies on
(concatenated weights, clipping, uniform perplexity, truncated and long sequences)."""
from __future__ import annotations

import math
from typing import Iterator

import numpy as np
import torch

from core.nn import rnn_ref
from core.nn.cells import CELLS
from core.nn.models import ModelSpec, RNNLM, clip_gradients, detach_state, perplexity
from core.nn.verify.common import (CASES, TOL_IDENTITY, TOL_REL, Case, Result, max_abs, rel_err)


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
