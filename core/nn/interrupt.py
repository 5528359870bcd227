"""Stop a training step part-way: a run's stop flag, polled inside long loops (the fused RNN's time loop, the
chunks of a gated cell's sequence, the validation pass), so Stop takes effect within a fraction of a second
even when one step takes many seconds. The flag is per thread: one run's Stop never interrupts another's."""
from __future__ import annotations

import threading
from contextlib import contextmanager

_local = threading.local()


class Interrupted(RuntimeError):
    """Raised inside a step when its run was asked to stop; the step is abandoned, the weights untouched."""


@contextmanager
def interruptible(event: threading.Event | None):
    """Within this block, poll() raises Interrupted once event is set (nothing happens when event is None)."""
    previous = getattr(_local, "event", None)
    _local.event = event
    try:
        yield
    finally:
        _local.event = previous


def active() -> bool:
    return getattr(_local, "event", None) is not None


def poll() -> None:
    event = getattr(_local, "event", None)
    if event is not None and event.is_set():
        raise Interrupted("stopped during a step")


def poll_hook(grad) -> None:
    """A tensor hook that polls during the backward pass (register it on a state the backward goes through)."""
    poll()
