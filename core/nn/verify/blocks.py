"""A batch computed in blocks of rows (core.nn.blocks, the book preset's two blocks) against the whole batch."""
from __future__ import annotations

from typing import Iterator

import torch

from core.nn.models import ModelSpec, RNNLM
from core.nn.blocks import Blocks
from core.nn.verify.common import TOL_IDENTITY, Result, max_abs


def _book_net(V: int, h: int, dtype: torch.dtype, seed: int) -> RNNLM:
    torch.manual_seed(seed)
    net = RNNLM(ModelSpec(vocab_size=V, hidden_size=h, cell="rnn")).to(dtype)
    net.init_book()
    return net


def _blocks(net: RNNLM, x, y, blocks: int, processes: int):
    """(mean loss, every .grad, summed loss) of x, y computed in `blocks` blocks by `processes` processes."""
    net.zero_grad(set_to_none=True)
    with Blocks(net, blocks, processes, capacity=x.numel()) as blocks:
        loss, _, backward = blocks.training_loss(x, y)
        backward()
        total = blocks.loss_sum(x, y)
    return float(loss), [p.grad.clone() for p in net.parameters() if p.requires_grad], total


def block_checks() -> Iterator[Result]:
    """float64: the blocks' mean loss, gradients and summed loss against the whole batch through autograd (a sum
    regrouped, so equal to rounding); float32: one process against a helper process, bit for bit."""
    for i, (B, T, V, h, blocks) in enumerate(((12, 7, 11, 6, 2), (37, 9, 28, 32, 3))):
        torch.manual_seed(600 + i)
        x, y = torch.randint(0, V, (B, T)), torch.randint(0, V, (B, T))
        net = _book_net(V, h, torch.float64, 700 + i)
        loss, grads, total = _blocks(net, x, y, blocks, 1)
        net.zero_grad(set_to_none=True)
        whole, _ = net.loss(x, y)
        whole.backward()
        with torch.no_grad():
            whole_sum = float(net.loss(x, y, reduction="sum")[0])
        err = max(abs(loss - float(whole.detach())), abs(total - whole_sum) / abs(whole_sum),
                  *(max_abs(a, p.grad) for a, p in zip(grads, [p for p in net.parameters() if p.requires_grad])))
        yield Result(f"{blocks} blocks of a batch == the whole batch through autograd (float64): mean loss, summed "
                     f"loss, every gradient [B={B} T={T} V={V} h={h}]", err, TOL_IDENTITY)
        net = _book_net(V, h, torch.float32, 800 + i)
        (l1, g1, s1), (l2, g2, s2) = (_blocks(net, x, y, blocks, n) for n in (1, blocks))
        err = max(abs(l1 - l2), abs(s1 - s2), *(max_abs(a, b) for a, b in zip(g1, g2)))
        yield Result(f"{blocks} blocks in one process == the same blocks in {blocks} processes, bit for bit (float32): "
                     f"mean loss, summed loss, every gradient [B={B} T={T} V={V} h={h}]", err, 0.0)
