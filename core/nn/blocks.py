"""A batch in blocks of rows, computed side by side in CPU processes: data parallelism for the fused one-layer
tanh RNN over characters (the book's model).

At the book's sizes a training step is some 300 small operations. Torch's threads split only the larger ones, and
two Python threads of one process cannot run the small ones side by side (the interpreter's lock). Here a batch's
rows are cut into a fixed number of blocks (TrainConfig.blocks); each block's loss and gradients are computed on
one thread, either in the run's own process or in a helper process forked when the run starts, and the blocks'
results are added in block order. The numbers depend on the number of blocks, never on how many processes
computed them: a run repeats itself to the last digit with one process or two. Helpers share the weights, the
blocks' token ids and their gradients through shared memory, and a pipe carries a few bytes each way per block.
"""
from __future__ import annotations

import contextlib
import ctypes
import math
import mmap
import os
import signal
import struct
import sys
import threading
import time

import torch

from core.checks import check_int
from core.nn.device import cpu_threads
from core.nn.fused import block_loss_sum, block_step, put_grads
from core.nn.interrupt import interruptible

_HEAD = struct.Struct("<cdii")        # operation, the block's weight in the batch's mean, time steps, rows
_TRAIN, _SUM, _QUIT = b"t", b"s", b"q"
_OK, _FAILED = b"k", b"x"


def eligible(net, device: torch.device) -> bool:
    """The path blocks work on: the fused CPU path over token ids (RNNLM's own test), one layer, no dropout."""
    tokens = torch.empty(0, 0, dtype=torch.long, device=device)
    return net.fused_tokens(tokens) and net.spec.num_layers == 1 and net.spec.dropout == 0


@contextlib.contextmanager
def run_blocks(net, device: torch.device, blocks: int, capacity: int, helpers: bool = True):
    """A run's batch blocks: `blocks` a batch, with a helper process for each block after the first up to this
    process's CPU threads (none when helpers is False or RNNLAB_BLOCK_HELPERS=0: the same numbers in this process
    alone); capacity: the token ids the largest block holds. None for one block, or a model they do not apply to
    (eligible): the run computes its batches with the model itself."""
    if blocks == 1 or not eligible(net, device):
        yield None
        return
    helpers = helpers and os.environ.get("RNNLAB_BLOCK_HELPERS", "1") != "0"
    with Blocks(net, blocks, torch.get_num_threads() if helpers else 1, capacity) as run:
        yield run


def row_blocks(rows: int, blocks: int) -> list[slice]:
    """rows cut into `blocks` contiguous blocks of nearly equal size (the first ones one larger); empty ones left
    out. Depends on the two numbers only, so every process cuts a batch the same way."""
    size, extra = divmod(rows, blocks)
    cuts = [k * size + min(k, extra) for k in range(blocks + 1)]
    return [slice(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]


class _Memory:
    """Tensors laid one after another in an anonymous shared mapping, which a forked process sees too."""

    def __init__(self, layout: list[tuple[torch.dtype, int]]):
        sizes = [torch.empty((), dtype=d).element_size() * n for d, n in layout]
        offsets = [sum(sizes[:k]) for k in range(len(sizes))]
        self.mem = mmap.mmap(-1, max(1, sum(sizes)))
        self.tensors = [torch.frombuffer(self.mem, dtype=d, count=n, offset=o) if n else torch.empty(0, dtype=d)
                        for (d, n), o in zip(layout, offsets)]


def _shaped(flat: torch.Tensor, like) -> list[torch.Tensor]:
    return [v.view_as(p) for v, p in zip(flat.split([p.numel() for p in like]), like)]


class _StopFlag:
    """A stop flag in shared memory, read by a helper's polls (core.nn.interrupt) like a threading.Event."""

    def __init__(self, cell: torch.Tensor):
        self.cell = cell

    def is_set(self) -> bool:
        return bool(self.cell[0])


def _may_fork() -> bool:
    """Helpers are forked on Linux only (elsewhere fork is missing, or unsafe beside the system's libraries), and
    only from a process's main thread (a Streamlit script thread, say, shares its process with a web server)."""
    return sys.platform.startswith("linux") and threading.current_thread() is threading.main_thread()


def _read_exact(fd: int, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            return b""
        data += chunk
    return data


class _Helper:
    """A forked process that computes the blocks it is sent, on one thread, from the weights in shared memory."""

    def __init__(self, weights: list[torch.Tensor], stop: torch.Tensor, capacity: int, others: list[int]):
        like = weights[:1] + weights[2:]                   # W_ih, the summed bias (b_hh's shape), W_hh, the head
        ids, targets, grads, result = _Memory([(torch.int64, capacity), (torch.int64, capacity),
                                               (weights[0].dtype, sum(w.numel() for w in like)),
                                               (torch.float64, 1)]).tensors
        self.ids, self.targets, self.result, self.capacity = ids, targets, result, capacity
        self.grads = _shaped(grads, like)
        ask_r, self.ask = os.pipe()
        self.answer, answer_w = os.pipe()
        flag = _StopFlag(stop)                             # the helper's view of the run's stop
        self.pid = os.fork()
        if self.pid == 0:                                  # the helper: serve blocks until told to quit
            try:
                for fd in (*others, self.ask, self.answer):
                    os.close(fd)
                self._serve(ask_r, answer_w, weights, flag)
            finally:
                os._exit(0)
        os.close(ask_r)
        os.close(answer_w)

    def _serve(self, ask: int, answer: int, weights, stop: _StopFlag) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)      # Ctrl-C is the run's to handle; the helper ends with it
        with contextlib.suppress(Exception):               # ... and when the process that forked it dies (Linux)
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
        torch.set_num_threads(1)
        with interruptible(stop):
            while True:
                head = _read_exact(ask, _HEAD.size)
                if not head or head[:1] == _QUIT:
                    return
                op, weight, steps, rows = _HEAD.unpack(head)
                try:
                    ids = self.ids[:steps * rows].view(steps, rows)
                    targets = self.targets[:steps * rows].view(steps, rows)
                    if op == _TRAIN:
                        loss, grads = block_step(ids, targets, weights, weight)
                        torch._foreach_copy_(self.grads, list(grads))
                        self.result[0] = loss
                    else:
                        self.result[0] = block_loss_sum(ids, targets, weights)
                    os.write(answer, _OK)
                except Exception:                          # a stop, or anything else: the run computes it itself
                    os.write(answer, _FAILED)

    def send(self, op: bytes, ids: torch.Tensor, targets: torch.Tensor, weight: float = 1.0) -> bool:
        """Start a block; False when it does not fit the shared buffers or the helper is gone."""
        steps, rows = ids.shape
        if steps * rows > self.capacity:
            return False
        self.ids[:steps * rows].view(steps, rows).copy_(ids)
        self.targets[:steps * rows].view(steps, rows).copy_(targets)
        try:
            os.write(self.ask, _HEAD.pack(op, weight, steps, rows))
        except OSError:
            return False
        return True

    def receive(self) -> bool:
        """Wait for the block sent last; True when its results are in the shared buffers."""
        return _read_exact(self.answer, 1) == _OK

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self.ask, _HEAD.pack(_QUIT, 0.0, 0, 0))
        for fd in (self.ask, self.answer):
            with contextlib.suppress(OSError):
                os.close(fd)
        deadline = time.monotonic() + 1.0
        with contextlib.suppress(ChildProcessError):           # already waited for elsewhere
            while os.waitpid(self.pid, os.WNOHANG) == (0, 0):
                if time.monotonic() > deadline:                # a block still going: it is of no use now
                    os.kill(self.pid, signal.SIGKILL)
                    os.waitpid(self.pid, 0)
                    return
                time.sleep(0.002)


class Blocks:
    """A run's blocks: `blocks` per batch, computed by this process and up to processes - 1 forked helpers.
    Use it as a context manager (the helpers end with the block), or call close()."""

    def __init__(self, net, blocks: int, processes: int = 1, capacity: int = 0):
        check_int("blocks", blocks, 1, 1 << 16)
        check_int("processes", processes, 1, 1 << 16)
        r = net.rnn
        self.params = (r.weight_ih_l0, r.bias_ih_l0, r.bias_hh_l0, r.weight_hh_l0, net.head.weight, net.head.bias)
        self.blocks = blocks
        self.helpers: list[_Helper] = []
        count = min(blocks, processes) - 1 if _may_fork() else 0
        if count > 0 and capacity > 0:
            flat, self.stop = _Memory([(self.params[0].dtype, sum(p.numel() for p in self.params)),
                                       (torch.uint8, 1)]).tensors
            self.weights = _shaped(flat, self.params)
            for _ in range(count):
                others = [fd for h in self.helpers for fd in (h.ask, h.answer)]
                try:
                    self.helpers.append(_Helper(self.weights, self.stop, capacity, others))
                except OSError:                                    # no process or memory to spare: fewer helpers
                    break

    def __enter__(self) -> "Blocks":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        helpers, self.helpers = self.helpers, []
        for h in helpers:
            h.close()

    def _run(self, op: bytes, ids: torch.Tensor, targets: torch.Tensor, local):
        """Every block of (T, B) ids and targets: the helpers' blocks sent, this process's computed by local(ids,
        targets, share), then each helper's answer read (a failed one computed here). A block's share is its part
        of the batch's rows. Returns, in block order, (share, local's result or the helper that holds it)."""
        slices = row_blocks(ids.shape[1], self.blocks)
        shares = [(s.stop - s.start) / ids.shape[1] for s in slices]
        if self.helpers:
            torch._foreach_copy_(self.weights, [p.detach() for p in self.params])
            self.stop[0] = 0
        sent = {}
        for k, s in enumerate(slices[1:len(self.helpers) + 1], start=1):
            if self.helpers[k - 1].send(op, ids[:, s], targets[:, s], shares[k]):
                sent[k] = self.helpers[k - 1]
        results: dict = {}
        try:
            with cpu_threads(1):                                   # one thread: the helpers' arithmetic
                for k, s in enumerate(slices):
                    if k not in sent:
                        results[k] = local(ids[:, s], targets[:, s], shares[k])
        except BaseException:
            if self.helpers:
                self.stop[0] = 1                                   # a stop: the helpers end their blocks too
            raise
        finally:
            for k, helper in sent.items():
                if helper.receive():
                    results[k] = helper
        with cpu_threads(1):
            for k, s in enumerate(slices):                         # a helper that failed: computed here
                if k not in results:
                    results[k] = local(ids[:, s], targets[:, s], shares[k])
        return [(shares[k], results[k]) for k in range(len(slices))]

    def training_loss(self, x: torch.Tensor, y: torch.Tensor, state=None):
        """A training step over x, y (batch, time): the batch's mean loss, and backward() that puts its gradients
        into .grad (as RNNLM.training_loss; every window starts from a zero state: state must be None)."""
        if state is not None:
            raise ValueError("Batch blocks start every window from a zero state: state must be None.")
        parts = self._run(_TRAIN, x.t(), y.t(), lambda i, t, w: block_step(i, t, self.params, w))
        loss, grads = 0.0, None
        for share, part in parts:
            value, block = (float(part.result[0]), part.grads) if isinstance(part, _Helper) else part
            loss += share * value
            grads = [g.clone() for g in block] if grads is None else [a.add_(g) for a, g in zip(grads, block)]
        return torch.tensor(loss, dtype=torch.float64), None, lambda: put_grads(self.params, grads)

    def loss_sum(self, x: torch.Tensor, y: torch.Tensor) -> float:
        """The summed cross-entropy of the windows x, y (batch, time) from zero states, block by block."""
        parts = self._run(_SUM, x.t(), y.t(), lambda i, t, w: block_loss_sum(i, t, self.params))
        return math.fsum(float(p.result[0]) if isinstance(p, _Helper) else p for _, p in parts)
