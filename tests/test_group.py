"""Runs of one shape trained together (core.runs.group, issue 65): the same numbers as alone within float32 rounding,
exactly the same again for the same group, and a run that is stopped or diverges leaves the others' numbers as
they were; then the job manager: runs queued behind a busy slot train as one group, each in its own folder."""
from __future__ import annotations

import dataclasses
import math
import threading

import pytest

from core.runs.config import PRESETS
from core.runs.group import groupable, shape_key, train_group
from core.runs.loop import train

TEXT = ("the quick brown fox jumps over the lazy dog while the time traveller talks of the fourth dimension "
        "and the psychologist doubts him and the medical man smiles ") * 40
SMALL = dict(epochs=2, batch_size=8, num_steps=16, hidden_size=24, sample_length=20, device="cpu")
TOLERANCE = 1e-5       # relative; the largest difference measured against training alone: 2.2e-6 (2026-12-07)


def configs(*pairs):
    return [dataclasses.replace(PRESETS["tiny"].config, seed=s, lr=lr, **SMALL) for s, lr in pairs]


def numbers(result) -> list:
    """A run's numbers, without its clock (elapsed time and speed differ from run to run)."""
    return [(r.epoch, r.step, r.train_ppl, r.val_ppl, r.val_ce, r.sample) for r in result.history]


FIVE = configs((0, 0.01), (1, 0.02), (2, 0.005), (3, 0.01), (4, 0.03))


def test_five_runs_as_a_group_give_their_curves_alone_within_float32_rounding():
    alone = [train(c, TEXT) for c in FIVE]
    group = train_group(FIVE, TEXT)
    worst = 0.0
    for a, g in zip(alone, group):
        assert g.status == a.status == "finished" and len(g.history) == len(a.history)
        for ra, rg in zip(a.history, g.history):
            assert rg.step == ra.step
            for f in ("train_ppl", "val_ppl"):
                va, vg = getattr(ra, f), getattr(rg, f)
                if math.isfinite(va):
                    worst = max(worst, abs(va - vg) / va)
    assert worst <= TOLERANCE, worst
    again = train_group(FIVE, TEXT)
    assert [numbers(r) for r in again] == [numbers(r) for r in group]       # a group repeats itself exactly


def test_a_stopped_and_a_diverging_run_leave_the_others_numbers_unchanged():
    plain = train_group(FIVE, TEXT)
    wild = list(FIVE)
    wild[1] = dataclasses.replace(FIVE[1], lr=100.0, clip=0.0, optimizer="sgd")   # diverges within steps
    stop = threading.Event()
    stops = [None, None, stop, None, None]

    def stop_after_first(p):
        if p.step >= 3:
            stop.set()
    reports = [None, None, stop_after_first, None, None]
    ended = {}
    results = train_group(wild, TEXT, on_progress=reports, stop_events=stops,
                          on_done=[lambda r, i=i: ended.setdefault(i, r) for i in range(5)])
    assert results[1].status == "diverged" and results[2].status == "stopped"
    assert results[2].history[-1].step < plain[2].history[-1].step and set(ended) == set(range(5))
    for i in (0, 3, 4):
        assert numbers(results[i]) == numbers(plain[i]), i


def test_what_groups():
    tiny = PRESETS["tiny"].config
    assert groupable(tiny) and groupable(PRESETS["whole"].config) and not groupable(PRESETS["bpe"].config)
    assert not groupable(dataclasses.replace(tiny, cell="gru")) and not groupable(dataclasses.replace(tiny, num_layers=2))
    assert not groupable(PRESETS["passage"].config) and not groupable(PRESETS["book"].config)   # they train alone
    assert shape_key(tiny) == shape_key(dataclasses.replace(tiny, seed=5, lr=0.1, clip=2.0))
    assert shape_key(tiny) != shape_key(dataclasses.replace(tiny, hidden_size=32))
    with pytest.raises(ValueError, match="one shape"):
        train_group([tiny, dataclasses.replace(tiny, hidden_size=32)], TEXT)


@pytest.mark.parametrize("mode", ["thread", "process"])
def test_runs_queued_behind_a_busy_slot_train_as_one_group_each_in_its_own_folder(mode, tmp_path, monkeypatch):
    """The job manager: while a run holds the one slot, five runs of one shape wait; they then start together in
    that slot, as one group (a learner sees 'with 4 others' while waiting and training), each reports and ends in
    its own folder, and each has the numbers it has alone, within the tolerance; a run of another shape waits for
    its own turn."""
    from core.runs.jobs import JobManager
    from test_training import wait_for
    monkeypatch.setenv("RNNLAB_RUNS_DIR", str(tmp_path))
    manager = JobManager(max_cpu=1, max_gpu=0, mode=mode)
    first = manager.submit(dataclasses.replace(FIVE[0], epochs=200), TEXT, "holder")
    waiting = [manager.submit(c, TEXT, f"learner{i}") for i, c in enumerate(FIVE)]
    other = manager.submit(dataclasses.replace(FIVE[0], hidden_size=16), TEXT, "other")
    assert [manager.position(j) for j in waiting] == [1] * 5 and manager.position(other) == 2
    assert manager.companions(waiting[2]) == 4 and manager.companions(other) == 0
    wait_for(lambda: first.progress is not None and first.progress.step > 0, 120)
    manager.stop(first.id)
    wait_for(lambda: all(not j.active for j in waiting + [other]), 240)
    assert {j.group_size for j in waiting} == {5} and len({j.group_id for j in waiting}) == 1
    assert manager.companions(waiting[0]) == 4 and other.group_size == 1
    for job, config in zip(waiting, FIVE):
        assert job.status == "finished", job.message
        alone = train(config, TEXT)
        for ra, rg in zip(alone.history, job.result.history):
            assert rg.val_ppl == pytest.approx(ra.val_ppl, rel=TOLERANCE)
    assert other.status == "finished"
