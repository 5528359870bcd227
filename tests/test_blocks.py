"""A batch in blocks of rows (core.nn.blocks): the same numbers with or without helper processes, helpers that end
with their run (finished, stopped, or dead part-way), and the checks on the settings."""
import os
import signal
import threading
from dataclasses import replace

import pytest
import torch

from core.nn.models import ModelSpec, RNNLM
from core.nn import blocks
from core.nn.blocks import Blocks, row_blocks
from core.runs import loop
from core.runs.config import PRESETS, TrainConfig
from core.runs.data import prepare_data
from core.runs.record import Status
from test_training import TEXT

BOOKISH = TrainConfig(init="book", blocks=2, num_train=600, num_val=150, batch_size=128, num_steps=16,
                      hidden_size=24, epochs=2, device="cpu", sample_length=20)


class Recorded(Blocks):
    """Blocks that remember their helpers' process ids."""
    pids: list[int] = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        Recorded.pids.extend(h.pid for h in self.helpers)


@pytest.fixture
def recorded(monkeypatch):
    Recorded.pids = []
    monkeypatch.setattr(blocks, "Blocks", Recorded)   # the class core.nn.blocks.run_blocks opens for a run
    return Recorded


def fingerprint(result):
    weights = [p.detach().clone() for p in result.lm.net.parameters()]
    return [(r.train_ppl, r.val_ce, r.sample) for r in result.history], weights


def same(a, b) -> bool:
    return a[0] == b[0] and all(torch.equal(x, y) for x, y in zip(a[1], b[1]))


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_row_blocks_cover_every_row_once_in_nearly_equal_blocks():
    for rows in range(0, 41):
        for blocks in range(1, 6):
            cut = row_blocks(rows, blocks)
            assert [i for s in cut for i in range(s.start, s.stop)] == list(range(rows))
            sizes = [s.stop - s.start for s in cut]
            assert len(cut) == min(rows, blocks) and (not sizes or max(sizes) - min(sizes) <= 1)


def test_the_book_preset_trains_in_two_blocks():
    assert PRESETS["book"].config.blocks == 2 and TrainConfig().blocks == 1


def test_a_blocked_run_repeats_itself_whatever_its_threads_and_helpers(recorded, monkeypatch):
    data = prepare_data(BOOKISH, TEXT)
    runs = {n: fingerprint(loop.train(replace(BOOKISH, threads=n), data=data)) for n in (1, 2)}
    assert len(recorded.pids) == 1                    # two threads: one helper process; one thread: none
    ray_task = fingerprint(loop.train(replace(BOOKISH, threads=2), data=data, helpers=False))
    monkeypatch.setenv("RNNLAB_BLOCK_HELPERS", "0")
    alone = fingerprint(loop.train(replace(BOOKISH, threads=2), data=data))
    assert len(recorded.pids) == 1                    # no helper in either: the same numbers
    assert same(runs[1], runs[2]) and same(runs[1], alone) and same(runs[1], ray_task)
    whole = fingerprint(loop.train(replace(BOOKISH, threads=2, blocks=1), data=data))
    assert not same(whole, alone)                     # one block sums in another order ...
    assert abs(whole[0][-1][1] - alone[0][-1][1]) < 1e-4   # ... to nearly the same validation loss


def test_helpers_end_with_their_run_finished_or_stopped(recorded):
    data = prepare_data(BOOKISH, TEXT)
    loop.train(replace(BOOKISH, threads=2), data=data)
    stop = threading.Event()
    result = loop.train(replace(BOOKISH, threads=2, epochs=50), data=data, stop_event=stop,
                        on_progress=lambda p: stop.set() if p.step >= 3 else None, report_every=0.0)
    assert result.status == Status.STOPPED and len(recorded.pids) == 2
    assert all(gone(pid) for pid in recorded.pids)


def test_a_helper_that_dies_part_way_loses_nothing(recorded):
    """Its blocks are computed by the run's own process from then on: the same numbers as an undisturbed run."""
    data = prepare_data(BOOKISH, TEXT)
    calm = fingerprint(loop.train(replace(BOOKISH, threads=2), data=data))
    killed = []

    def kill_after_step_two(progress):
        if progress.step >= 2 and not killed:
            os.kill(recorded.pids[-1], signal.SIGKILL)
            killed.append(progress.step)

    hurt = loop.train(replace(BOOKISH, threads=2), data=data, on_progress=kill_after_step_two, report_every=0.0)
    assert killed and hurt.status == Status.FINISHED and same(calm, fingerprint(hurt))


def test_validation_outside_a_run_gives_the_runs_numbers():
    data = prepare_data(BOOKISH, TEXT)
    result = loop.train(replace(BOOKISH, threads=2), data=data)
    cpu, net = torch.device("cpu"), result.lm.net
    again = loop.evaluate(net, data, BOOKISH, cpu, path=loop.scoring_path(BOOKISH, net, cpu))
    assert again == result.history[-1].val_ce


def test_bad_block_counts_are_refused():
    for bad in (0, 17, 1.5, "2"):
        with pytest.raises(ValueError, match="blocks"):
            TrainConfig(blocks=bad)
    net = RNNLM(ModelSpec(vocab_size=5, hidden_size=3))
    with pytest.raises(ValueError, match="blocks"):
        Blocks(net, 0)
