"""The second hostile sweep's run-store and job findings (issue 27), each as a state a test can wait for:
nothing lost, nothing stolen, nothing stuck, and every damaged file named."""
import json
import threading
import time
from collections import namedtuple

import pytest

from core.runs import store, tasks, worker
from core.runs.config import TrainConfig
from core.runs.jobs import JobManager
from test_run_store import wait_until_training
from test_training import SMALL, TEXT


def test_a_run_key_is_ascii_letters_and_nothing_after_them(tmp_path):
    for bad in ("abcdef\n", "abcdéf", "日本日本日本", "abc def", "abcdef\x00"):
        assert not store.is_key(bad)
        with pytest.raises(ValueError):
            store.run_folder(bad, tmp_path)
    manager = JobManager(max_cpu=1, max_gpu=0, mode="thread")
    assert manager.adopt("ünïcødé-run", "s1") is None and manager.adopt("abcdefgh\n", "s1") is None


def test_a_followed_run_takes_no_slot_and_the_next_run_starts(tmp_path, monkeypatch):
    monkeypatch.setenv("RNNLAB_RUNS_DIR", str(tmp_path))
    first = JobManager(max_cpu=1, max_gpu=0, mode="thread")
    going = wait_until_training(first.submit(TrainConfig(**{**SMALL, "epochs": 2000}), TEXT, "a"))
    second = JobManager(max_cpu=1, max_gpu=0, mode="thread")
    try:
        seen = second.adopt(going.token, "b")
        assert seen.followed and seen.active and second.running("cpu") == 0
        mine = wait_until_training(second.submit(TrainConfig(**{**SMALL, "epochs": 2000}), TEXT, "c"))
        assert mine.status == "running"                  # not queued behind a run trained elsewhere
        second.stop(mine.id)
        mine.thread.join(60)
    finally:
        first.stop(going.id)
        going.thread.join(60)


def test_opening_someone_s_run_shares_it_and_closing_that_tab_takes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("RNNLAB_RUNS_DIR", str(tmp_path))
    alive = {"a", "b"}
    now = [1000.0]
    manager = JobManager(max_cpu=1, max_gpu=0, mode="thread", session_alive=lambda sid: sid in alive,
                         abandon_after=0.3, clock=lambda: now[0])
    job = wait_until_training(manager.submit(TrainConfig(**{**SMALL, "epochs": 2000}), TEXT, "a"))
    try:
        assert manager.adopt(job.token, "b") is job
        alive.discard("b")                               # B closes the tab
        now[0] += 0.5                                    # longer than abandon_after on the manager's clock
        assert job in manager.for_session("a") and job in manager.for_session("b")
        assert manager.unwatched_for(job) == 0 and not job.stop_event.is_set()   # A still watches: it goes on
        alive.discard("a")                               # now nobody watches
        manager.unwatched_for(job)                       # noticed gone now ...
        now[0] += 0.5                                    # ... and long enough ago
        deadline = time.time() + 60
        while job.active and time.time() < deadline:     # the run's next report stops it
            time.sleep(0.1)
        assert job.status == "stopped" and "no one watching" in job.message
    finally:
        manager.stop(job.id)
        job.thread.join(60)


def finished_run(tmp_path, monkeypatch):
    monkeypatch.setenv("RNNLAB_RUNS_DIR", str(tmp_path))
    manager = JobManager(max_cpu=1, max_gpu=0, mode="thread")
    job = manager.submit(TrainConfig(**{**SMALL, "epochs": 1}), TEXT, "a")
    job.thread.join(120)
    assert job.status == "finished"
    return manager, job


def test_damaged_store_files_are_named(tmp_path, monkeypatch):
    manager, job = finished_run(tmp_path, monkeypatch)
    folder = store.run_folder(job.token)
    with open(folder / "progress.jsonl", "a") as f:      # junk lines: passed over, the rest still read
        f.write('"a string"\n{"p": {"epoch": "x"}, "rows": [1, 2]}\n{"p": {}, "rows": [], "extra": 1}\n')
    assert tasks.read_live(job.token).progress.epoch == 1
    (folder / "state.json").write_text("{not json")
    with pytest.raises(ValueError, match="state.json"):
        JobManager(max_cpu=1, max_gpu=0, mode="thread").adopt(job.token, "b")
    (folder / "weights.safetensors").write_bytes(b"truncated")
    with pytest.raises(ValueError, match="not valid safetensors"):
        job.result.lm
    (folder / "weights.safetensors").unlink()
    assert job.result.missing() == ["weights.safetensors"]
    with pytest.raises(ValueError, match="weights.safetensors"):
        job.result.zip_bytes()
    with pytest.raises(ValueError, match="weights.safetensors is missing"):
        job.result.lm
    assert str(tmp_path) not in str(pytest.raises(ValueError, lambda: job.result.lm).value)   # no server path


def test_a_full_store_refuses_a_run_before_it_trains_and_names_the_setting(tmp_path, monkeypatch):
    monkeypatch.setenv("RNNLAB_RUNS_DIR", str(tmp_path))
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(store.shutil, "disk_usage", lambda path: usage(10**9, 10**9 - 10**6, 10**6))
    manager = JobManager(max_cpu=1, max_gpu=0, mode="thread")
    with pytest.raises(ValueError, match="RNNLAB_RUNS_DIR.*1 MB free") as refused:
        manager.submit(TrainConfig(**SMALL), TEXT, "a")
    assert str(tmp_path) not in str(refused.value) and not any(tmp_path.iterdir())   # no folder left behind


def test_an_unwritable_store_names_the_setting_not_the_path(tmp_path, monkeypatch, capsys):
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("x")
    with pytest.raises(ValueError, match=r"run store \(RNNLAB_RUNS_DIR\) cannot be written") as refused:
        store.create("run-abcdef", TrainConfig(**SMALL), "r", "cpu", blocked)
    assert str(tmp_path) not in str(refused.value)
    assert str(blocked) in capsys.readouterr().err       # the path goes to the server's log


def test_a_save_that_fails_keeps_no_half_written_run(tmp_path, monkeypatch):
    from core.runs import saved
    manager, job = finished_run(tmp_path, monkeypatch)
    result = store.StoredRun.read(store.run_folder(job.token))
    real = saved.metrics_csv
    monkeypatch.setattr(saved, "metrics_csv", lambda h: (_ for _ in ()).throw(OSError(28, "No space left")))
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    lm_result = type("R", (), {"lm": result.lm, "history": result.history, "config": result.config,
                               "status": "finished", "message": "", "device": "cpu", "elapsed": 1.0,
                               "tokens_per_s": 1.0, "best_epoch": 0})()
    with pytest.raises(OSError):
        saved.write_files(lm_result, fresh)
    assert list(fresh.iterdir()) == []                   # all or nothing: no weights without run.json
    monkeypatch.setattr(saved, "metrics_csv", real)


def test_a_stop_before_the_first_step_ends_the_run_at_once(tmp_path):
    store.create("run-early", TrainConfig(**SMALL), "r", "cpu", tmp_path)
    stop = threading.Event()
    stop.set()
    state = worker.run({"config": TrainConfig(**{**SMALL, "epochs": 500}).to_dict(), "text": TEXT,
                        "key": "run-early", "root": str(tmp_path)}, stop)
    assert state["status"] == "stopped" and "before its first step" in state["message"]
    assert json.loads((tmp_path / "run-early" / "state.json").read_text())["status"] == "stopped"


def test_a_run_whose_server_goes_away_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("RNNLAB_RUNS_DIR", str(tmp_path))
    manager = JobManager(max_cpu=1, max_gpu=0, mode="process")
    job = wait_until_training(manager.submit(TrainConfig(**{**SMALL, "epochs": 500}), TEXT, "s1"))
    job.trainer.process.stdin.close()                    # as if the server had died
    job.thread.join(60)
    assert job.status == "stopped" and "the server went away" in job.message
    assert (store.run_folder(job.token) / "weights.safetensors").exists()
