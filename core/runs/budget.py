"""A run's memory: how much it needs, estimated before it starts, so that a run that cannot fit is refused with a
message saying what to lower (instead of failing minutes later with an allocator's message), and how the heap
keeps its large blocks while it trains.

Keeping freed blocks (glibc on Linux; elsewhere a no-op): glibc hands every freed block above its mmap
threshold straight back to the operating system, so a training step that creates and frees a dozen
multi-megabyte temporaries page-faults all of them in again on the next step: about 1,300 page faults per step on the book preset, a sizeable share of a 10 ms step on
a small machine. PyTorch's CPU performance guide suggests a caching allocator (jemalloc, tcmalloc) for
this; raising glibc's own thresholds does the same without a dependency. The thresholds grow with the
run's largest tensor (thresholds(): the BPE preset's scores are 128 MiB a step), and the memory estimate
counts what they let the heap keep (kept_bytes). release_freed_memory() gives the retained memory
back when a run ends.
"""
from __future__ import annotations

import ctypes
import sys
from dataclasses import dataclass
from pathlib import Path

import torch

from core.nn.cells import CELLS
from core.nn.param_counts import model_parameters
from core.runs.config import TrainConfig

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 64 << 20    # blocks up to 64 MiB (or twice a step's largest tensor) come from the heap, reused
_TRIM_THRESHOLD = 256 << 20   # up to 256 MiB (or four of a step's largest tensors) of free heap is kept
_MOST_KEPT = 1 << 30          # but never more than 1 GiB kept, nor blocks over 512 MiB taken from the heap


def thresholds(block_bytes: int = 0) -> tuple[int, int]:
    """(mmap threshold, trim threshold) for a run whose largest tensor is block_bytes. The BPE preset's scores
    are 128 MiB a step: above a fixed 64 MiB they were mapped and faulted in anew every step (12.9 million page
    faults in two epochs, 33.8 s); sized by the run, 0.25-1.1 million faults and 23.3-23.9 s."""
    return (min(max(_MMAP_THRESHOLD, 2 * block_bytes), _MOST_KEPT // 2),
            min(max(_TRIM_THRESHOLD, 4 * block_bytes), _MOST_KEPT))


def kept_bytes(block_bytes: int = 0) -> int:
    """The most free heap a run may keep between its steps (for the memory estimate, core.runs.budget)."""
    return thresholds(block_bytes)[1]


def _glibc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL("libc.so.6")
        return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


def keep_freed_memory(block_bytes: int = 0) -> bool:
    """Ask glibc to reuse freed large blocks instead of unmapping them, for a run whose largest tensor is
    block_bytes. True when the setting took."""
    libc = _glibc()
    if libc is None:
        return False
    mmap_threshold, trim_threshold = thresholds(block_bytes)
    return bool(libc.mallopt(_M_MMAP_THRESHOLD, mmap_threshold)) and bool(libc.mallopt(_M_TRIM_THRESHOLD,
                                                                                       trim_threshold))


def release_freed_memory() -> None:
    """Return free heap memory to the operating system (after a run)."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)


FLOAT = 4                      # bytes: training works in float32


def parameters(config: TrainConfig, vocab_size: int, gates: int) -> int:
    """The model's parameters, for a cell with `gates` gates."""
    return model_parameters(vocab_size, config.hidden_size, config.embed_dim, config.num_layers, gates)


EVAL_NUMBERS = 1 << 21   # one validation chunk's output-layer scores (and its states): at most 2M numbers (8 MiB)


def chunk_windows(config: TrainConfig, vocab_size: int) -> int:
    """How many book-split windows one validation chunk holds: as many as keep its (positions x vocabulary)
    scores and its states under EVAL_NUMBERS each. Larger chunks are slower, not faster: memory that glibc maps
    fresh from the system costs a page fault per 4 KiB filled (the BPE preset's validation: 400 ms and 200,000
    page faults in chunks of 1,500 windows, 194-206 ms and none in chunks of 64-192). Below that, chunks of about 2,000
    windows did best for the book preset (its 5,000 in three)."""
    return max(1, EVAL_NUMBERS // (config.num_steps * max(vocab_size, config.hidden_size)))


def batch_blocks(config: TrainConfig) -> int:
    """How many blocks a batch is cut into (core.nn.blocks): the config's on the book split, where every window
    starts from a zero state; 1 (none) on the whole-corpus split."""
    return config.blocks if config.split == "book" else 1


def batch_windows(config: TrainConfig) -> int:
    """Windows in a training step's batch (the book split has no more than its training windows)."""
    return min(config.batch_size, config.num_train) if config.split == "book" else config.batch_size


def largest_block(config: TrainConfig, vocab_size: int, gates: int) -> int:
    """Bytes of a training step's largest tensor: the output layer's scores (positions x vocabulary) or a
    layer's states and gates (positions x hidden x gates), whichever is larger."""
    width = max(vocab_size, config.hidden_size * gates)
    return batch_windows(config) * config.num_steps * width * FLOAT


def estimate_bytes(config: TrainConfig, vocab_size: int, gates: int) -> int:
    """A generous estimate of a run's peak memory: weights with their gradients, optimizer state and the two
    copies a run keeps (last good, best), plus the activations one minibatch saves for backpropagation through
    time, its output layer's logits, a validation chunk's logits, and the freed blocks the heap keeps between
    steps (thresholds above)."""
    B = batch_windows(config)
    T, V, h = config.num_steps, vocab_size, config.hidden_size
    weights = parameters(config, V, gates) * FLOAT * (5 + (2 if config.optimizer == "adam" else 0))
    per_position = h * config.num_layers * gates * 3 + 3 * V + (0 if config.embed_dim else V)
    activations = B * T * per_position * FLOAT
    windows = min(chunk_windows(config, V), config.num_val)
    validation = windows * T * V * FLOAT * 2 if config.split == "book" else 16 * 256 * V * FLOAT * 2
    return int(weights + activations + validation + kept_bytes(largest_block(config, V, gates)))


def available_bytes(device: torch.device) -> int | None:
    """Free memory on the device (None when it cannot be read)."""
    if device.type == "cuda":
        return int(torch.cuda.mem_get_info(device)[0])
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


@dataclass(frozen=True)
class Plan:
    """What a run's settings come to once its text is tokenized, worked out once (plan_run) and passed down: the
    vocabulary's size, the model's parameters, the windows one validation chunk holds, the bytes of a step's
    largest tensor, the run's estimated peak memory, and the batch blocks: how many a batch is cut into (1: none,
    as on the whole-corpus split) and the token ids the largest holds (a training batch's or a validation chunk's)."""
    config: TrainConfig
    vocab_size: int
    params: int
    chunk: int
    largest: int
    need: int
    blocks: int
    block_ids: int


def plan_run(config: TrainConfig, vocab_size: int) -> Plan:
    """The run's plan: every size from the settings and the vocabulary's size (a TrainConfig's cell is checked)."""
    if not isinstance(config, TrainConfig):
        raise ValueError("plan_run needs a TrainConfig.")
    gates, chunk, blocks = CELLS[config.cell].gates, chunk_windows(config, vocab_size), batch_blocks(config)
    rows = -(-max(config.batch_size, chunk) // blocks)
    return Plan(config, vocab_size, parameters(config, vocab_size, gates), chunk,
                largest_block(config, vocab_size, gates), estimate_bytes(config, vocab_size, gates), blocks,
                rows * config.num_steps)


def check_fits(plan: Plan, device: torch.device, share: float = 0.8) -> int:
    """The plan's memory estimate, or ValueError when it is over `share` of the device's free memory."""
    need, config = plan.need, plan.config
    free = available_bytes(device)
    if free is not None and need > share * free:
        raise ValueError(f"This run would need about {need / 2**30:.1f} GB of memory, but the {device.type.upper()} has "
                         f"{free / 2**30:.1f} GB free. Lower the hidden units ({config.hidden_size}), the batch size "
                         f"({config.batch_size}) or the time steps per window ({config.num_steps}).")
    return need
