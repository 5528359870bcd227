"""Keep large freed blocks in the process heap while training (glibc on Linux; elsewhere a no-op).

glibc hands every freed block above its mmap threshold straight back to the operating system, so a
training step that creates and frees a dozen multi-megabyte temporaries page-faults all of them in again
on the next step: about 1,300 page faults per step on the book preset, a sizeable share of a 10 ms step on
a small machine. PyTorch's CPU performance guide suggests a caching allocator (jemalloc, tcmalloc) for
this; raising glibc's own thresholds does the same without a dependency. The thresholds grow with the
run's largest tensor (thresholds(): the BPE preset's scores are 128 MiB a step), and the memory estimate
counts what they let the heap keep (core.runs.budget). release_freed_memory() gives the retained memory
back when a run ends.
"""
from __future__ import annotations

import ctypes
import sys

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
