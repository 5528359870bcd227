"""Which device training uses."""
from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from typing import Iterator

import torch

from core.checks import check_choice, check_int
from core.i18n import ngettext

# Reproducible runs on a GPU: cuBLAS (which cuDNN's RNNs call) only gives the same sums every time with a
# fixed workspace. It is read when CUDA first multiplies, so it is set here, before any run starts.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

DEVICES = ("auto", "cpu", "cuda")


def resolve_device(name: str = "auto") -> torch.device:
    """'auto' -> CUDA when a GPU is visible, else CPU; 'cuda' without a GPU raises ValueError."""
    with run_device(name) as device:
        return device


def _full_float32() -> None:
    """No TF32 in cuDNN's RNNs or cuBLAS's products (newer PyTorch names this fp32_precision; one API only,
    since PyTorch refuses a mix of the two)."""
    rnn = getattr(torch.backends.cudnn, "rnn", None)
    if rnn is not None and hasattr(rnn, "fp32_precision"):
        rnn.fp32_precision = torch.backends.cudnn.conv.fp32_precision = "ieee"
        torch.backends.cuda.matmul.fp32_precision = "ieee"
    else:
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False


_THREADS_LOCK = threading.Lock()
_THREADS_HELD = {"blocks": 0, "before": 0}   # the cpu_threads blocks open now, and the count before the first


@contextmanager
def cpu_threads(n: int) -> Iterator[None]:
    """Within the block, torch's CPU threads are n (0: as they are). torch's count is one for the whole process,
    and a server trains exercise checks in several script threads at once: the count before the first open block
    comes back when the last one ends, whatever order they end in (overlapping blocks share the last count set)."""
    with run_device("cpu", n):
        yield


@contextmanager
def run_device(name: str = "auto", threads: int = 0) -> Iterator[torch.device]:
    """A run's device ('auto': CUDA when a GPU is visible, else the CPU), and within the block its CPU threads as
    cpu_threads sets them (none set on a GPU, nor for 0)."""
    name, threads = check_choice("device", name, DEVICES), check_int("threads", threads, 0, 256)
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("device 'cuda' was asked for, but no CUDA GPU is visible to PyTorch here: "
                         "choose 'cpu' or 'auto'.")
    device = torch.device(name)
    if device.type == "cuda":
        # Same seed, same run on the same GPU; and full float32 in cuDNN's RNNs, whose matrix products would
        # otherwise round their inputs to TF32 (10 bits of mantissa) and drift from the CPU's numbers by 1e-4
        # and more. These models are far too small for TF32 to make them faster.
        torch.backends.cudnn.deterministic = True
        _full_float32()
    if device.type != "cpu" or not threads:
        yield device
        return
    with _THREADS_LOCK:
        if not _THREADS_HELD["blocks"]:
            _THREADS_HELD["before"] = torch.get_num_threads()
        _THREADS_HELD["blocks"] += 1
        torch.set_num_threads(threads)
    try:
        yield device
    finally:
        with _THREADS_LOCK:
            _THREADS_HELD["blocks"] -= 1
            if not _THREADS_HELD["blocks"]:
                torch.set_num_threads(_THREADS_HELD["before"])


def describe_device(device: torch.device | str | None = None, threads: int | None = None) -> str:
    """A short human label, e.g. 'CUDA: NVIDIA H200' or 'CPU (2 threads)'; threads: the CPU threads a run there
    uses (default: this process's)."""
    device = resolve_device("auto") if device is None else torch.device(device)
    if device.type == "cuda":
        return f"CUDA: {torch.cuda.get_device_name(device)}"
    n = torch.get_num_threads() if threads is None else threads
    return ngettext("CPU ({n} thread)", "CPU ({n} threads)", n).format(n=n)
