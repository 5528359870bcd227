"""How long Stop takes inside a long training step: runs whose one step takes seconds on a small CPU, Stop
pressed 0.4 s after the first report, the time from the press to train() returning (median of a few).

    python bench/stop_latency.py
"""

# tests/test_benches.py runs this bench at a tiny size (RNNLAB_BENCH_TINY=1) with each argument list here
TINY_RUNS = [[]]
NEEDS_CORPUS = False

import random
import statistics
import threading
import time

from common import size
from core.runs.config import TrainConfig
from core.runs.loop import train


def seconds_to_stop(cell: str, hidden: int, text: str) -> float:
    cfg = TrainConfig(cell=cell, hidden_size=hidden, batch_size=256, num_steps=64, num_train=512, num_val=64,
                      epochs=1000, sample_length=5)   # never ends before the Stop (the tiny size's steps are short)
    stop, pressed = threading.Event(), []

    def press_soon(p):
        if not pressed:
            pressed.append(None)
            threading.Timer(0.4, lambda: (pressed.append(time.perf_counter()), stop.set())).start()
    result = train(cfg, text, on_progress=press_soon, stop_event=stop)
    assert result.status == "stopped", result.message
    return time.perf_counter() - pressed[1]


if __name__ == "__main__":
    rng = random.Random(0)
    text = " ".join("".join(rng.choice("abcdefgh") for _ in range(rng.randint(2, 7))) for _ in range(3000))
    for cell, hidden in size([("rnn", 2048), ("gru", 1024), ("scratch", 1536)], [("rnn", 512)]):   # tiny: checks it runs
        waits = [seconds_to_stop(cell, hidden, text) for _ in range(size(3, 1))]
        print(f"{cell} with {hidden} hidden units: Stop took a median {statistics.median(waits):.2f} s "
              f"(max {max(waits):.2f} s over {len(waits)}); goal about a second")
