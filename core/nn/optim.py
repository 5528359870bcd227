"""The optimizers and the learning-rate schedule a run uses, written out in a few tensor operations each.

torch.optim's optimizers import torch's compiler stack when the first one is built: about 1.5 s of CPU and 70 MB
of memory in every training process, before the first step. These classes do the same arithmetic, operation for
operation, without it (tests/test_runs.py checks them against torch.optim's, weight for weight, bit for bit):
- PlainSGD: w <- w - lr * (g + weight_decay * w)   (torch.optim.SGD without momentum)
- PlainAdamW: Adam's moving averages of g and g*g with bias correction, and decoupled weight decay
  w <- w * (1 - lr * weight_decay)   (torch.optim.AdamW with its default betas and eps)
- CosineSchedule: lr falls from its start to 0 along half a cosine over the run's steps
  (torch.optim.lr_scheduler.CosineAnnealingLR, with the same step-by-step update, so the same rounding)
"""
from __future__ import annotations

import math

import torch

from core.checks import check_int, check_real


class PlainSGD:
    """Minibatch SGD with the learning rate in self.lr (a schedule may change it between steps)."""

    def __init__(self, params: list, lr: float, weight_decay: float = 0.0):
        self.params = list(params)
        self.lr = check_real("The learning rate", lr, lo=0.0, lo_open=True)
        self.weight_decay = check_real("Weight decay", weight_decay, lo=0.0)

    @torch.no_grad()
    def step(self) -> None:
        live = [p for p in self.params if p.grad is not None]
        grads = [p.grad for p in live]
        if self.weight_decay:
            grads = torch._foreach_add(grads, live, alpha=self.weight_decay)
        torch._foreach_add_(live, grads, alpha=-self.lr)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()


class PlainAdamW(PlainSGD):
    """Adam with decoupled weight decay. Each parameter keeps its own step count and two moving averages, made on
    its first gradient (a parameter that never gets one never moves)."""

    def __init__(self, params: list, lr: float, weight_decay: float = 0.0,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8):
        super().__init__(params, lr, weight_decay)
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.state: dict[int, list] = {}   # id(param) -> [steps, mean of g, mean of g*g]

    def moments(self, p: torch.Tensor) -> list:
        if id(p) not in self.state:
            self.state[id(p)] = [0, torch.zeros_like(p), torch.zeros_like(p)]
        return self.state[id(p)]

    @torch.no_grad()
    def step(self) -> None:
        for p in self.params:
            if p.grad is not None:
                self.update(p, p.grad, self.moments(p))

    def update(self, p: torch.Tensor, g: torch.Tensor, moments: list) -> None:
        moments[0] += 1
        steps, mean, mean_sq = moments
        if self.weight_decay:
            p.mul_(1 - self.lr * self.weight_decay)
        mean.lerp_(g, 1 - self.beta1)
        mean_sq.mul_(self.beta2).addcmul_(g, g, value=1 - self.beta2)
        unbias1 = 1 - self.beta1 ** float(steps)
        unbias2 = 1 - self.beta2 ** float(steps)
        denom = (mean_sq.sqrt() / unbias2 ** 0.5).add_(self.eps)
        p.addcdiv_(mean, denom, value=-(self.lr / unbias1))


class CosineSchedule:
    """After each step, the optimizer's lr moves along lr0 * (1 + cos(pi * t / steps)) / 2, reaching 0 at the
    last step. Updated from the previous lr as torch's CosineAnnealingLR does (past the end it climbs again)."""

    def __init__(self, optimizer: PlainSGD, steps: int):
        self.steps = check_int("A learning-rate schedule's number of steps", steps, lo=1)
        self.optimizer, self.start, self.t = optimizer, optimizer.lr, 0

    def step(self) -> None:
        self.t += 1
        t, n, lr = self.t, self.steps, self.optimizer.lr
        if (t - 1 - n) % (2 * n) == 0:   # at the bottom the ratio below would divide by zero
            self.optimizer.lr = lr + self.start * (1 - math.cos(math.pi / n)) / 2
        else:
            self.optimizer.lr = (1 + math.cos(math.pi * t / n)) / (1 + math.cos(math.pi * (t - 1) / n)) * lr
