"""A stand-in for the book's own rnn-scratch training code, for timing only: the same model and recipe written
the way the chapter writes it (one-hot inputs multiplied by W_xh at every step, a Python list of states, the
output layer applied per step, autograd for the backward pass, the global-norm clip summed in Python, a
validation pass each epoch). Written here from the chapter's description, not copied.
"""

HELPER_OF = 'train_speed.py'   # runs inside that bench, not on its own (tests/test_benches.py)

import math
import time

import torch
import torch.nn.functional as F


def book_style_run(data, vocab_size: int, epochs: int = 3, hidden: int = 32, lr: float = 1.0,
                   batch_size: int = 1024, seed: int = 0) -> tuple[float, float, float]:
    """Train `epochs` epochs on data.train_x/train_y (+ validation each epoch); return (seconds per epoch,
    training tokens per second, final validation perplexity)."""
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    sigma = 0.01
    W_xh = (torch.randn(vocab_size, hidden) * sigma).requires_grad_()
    W_hh = (torch.randn(hidden, hidden) * sigma).requires_grad_()
    b_h = torch.zeros(hidden, requires_grad=True)
    W_hq = (torch.randn(hidden, vocab_size) * sigma).requires_grad_()
    b_q = torch.zeros(vocab_size, requires_grad=True)
    params = [W_xh, W_hh, b_h, W_hq, b_q]

    def forward(X):
        H, outputs = None, []
        for x in F.one_hot(X.T, vocab_size).float():           # (time, batch, vocab), one step at a time
            H = torch.tanh(x @ W_xh + (H @ W_hh if H is not None else 0) + b_h)
            outputs.append(H)
        return torch.stack([h @ W_hq + b_q for h in outputs], 1)

    def loss_of(X, Y):
        logits = forward(X)
        return F.cross_entropy(logits.reshape(-1, vocab_size), Y.reshape(-1))

    t0, tokens = time.perf_counter(), 0
    for _ in range(epochs):
        order = torch.randperm(len(data.train_x), generator=gen)
        for i in range(0, len(order), batch_size):
            idx = order[i: i + batch_size]
            X, Y = data.train_x[idx], data.train_y[idx]
            loss = loss_of(X, Y)
            for p in params:
                p.grad = None
            loss.backward()
            norm = torch.sqrt(sum(torch.sum(p.grad ** 2) for p in params))
            with torch.no_grad():
                if norm > 1.0:
                    for p in params:
                        p.grad *= 1.0 / norm
                for p in params:
                    p -= lr * p.grad
            tokens += Y.numel()
        with torch.no_grad():
            val = sum(float(loss_of(data.val_x[i: i + batch_size], data.val_y[i: i + batch_size]))
                      * data.val_y[i: i + batch_size].numel() for i in range(0, len(data.val_x), batch_size))
    seconds = time.perf_counter() - t0
    return seconds / epochs, tokens / seconds, math.exp(val / data.val_y.numel())
