"""A whole class at once (issue 16): the run store (written while read, found again after a restart or from
another web process, cleaned by age and size), the queue's estimate, a crashed worker, and the Ray backend on a
local Ray instance."""
import json
import os
import signal
import time

import pytest

from core.runs import store, tasks, worker
from core.runs.config import TrainConfig
from core.runs.record import EpochSample, HistoryRow, Progress
from test_run_store import wait_until_training
from test_training import SMALL, TEXT
from core.runs import launchers
from core.runs.jobs import JobManager


def progress(epoch: int, rows: list) -> Progress:
    return Progress(epoch, 5, 10 * epoch, 50, 9.0 - epoch, 9.5 - epoch, 3.0, 1000.0, float(epoch), 5.0 - epoch,
                    "cpu", sample=f"sample {epoch}", history=rows)


def test_the_store_is_read_while_it_is_written(tmp_path):
    store.create("run-abc", TrainConfig(**SMALL), "run 1", "cpu", tmp_path)
    live = tasks.read_live("run-abc", tmp_path)
    assert live.status == "queued" and live.progress is None and live.name == "run 1"
    writer = store.ProgressWriter("run-abc", tmp_path)
    rows = []
    for epoch in range(3):
        rows.append(HistoryRow(epoch, 10 * epoch, 9.0 - epoch, 9.5 - epoch, 3.0, 2.0, float(epoch), 1000.0,
                               sample=f"sample {epoch}"))
        writer.write(progress(epoch, list(rows)))
    with open(tmp_path / "run-abc" / "progress.jsonl", "a") as f:
        f.write('{"p": {"epoch": 3, "ep')                # the trainer is half-way through a line
    live = tasks.read_live("run-abc", tmp_path)
    assert live.progress.epoch == 2 and live.progress.history == rows     # whole history, rebuilt
    assert live.progress.samples == [EpochSample(0, "sample 0"), EpochSample(1, "sample 1"),
                                     EpochSample(2, "sample 2")]
    assert live.progress.val_ppl == 7.5
    lines = (tmp_path / "run-abc" / "progress.jsonl").read_text().splitlines()
    assert [len(json.loads(x)["rows"]) for x in lines[:3]] == [1, 1, 1]       # each line only its new rows
    store.request_stop("run-abc", tmp_path)
    assert store.stop_requested("run-abc", tmp_path)
    assert tasks.read_live("nothere", tmp_path) is None


def test_cleanup_goes_by_age_then_size_and_spares_runs_that_go(tmp_path):
    now = time.time()
    for i, (status, age_days, size) in enumerate([("finished", 10, 10), ("finished", 3, 30_000),
                                                  ("stopped", 2, 30_000), ("finished", 1, 30_000),
                                                  ("running", 9, 30_000)]):
        key = f"run-{i:03d}"
        folder = store.create(key, TrainConfig(**SMALL), key, "cpu", tmp_path)
        store.set_state(key, status, "", tmp_path)
        (folder / "weights.safetensors").write_bytes(b"x" * size)
        if status == "running":   # still going: its state was touched a moment ago
            continue
        for path in (folder, *folder.iterdir()):   # written age_days ago
            os.utime(path, (now - age_days * 86400,) * 2)
    deleted = store.cleanup(max_age_s=7 * 86400, max_total_bytes=100_000, root=tmp_path, now=now)
    # run-000 is too old; then the oldest finished go until the rest fit; the running one stays though older
    assert deleted == ["run-000", "run-001"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run-002", "run-003", "run-004"]


def test_cleanup_spares_a_run_someone_holds_or_that_ended_within_the_hour(tmp_path):
    """Even at a size limit of 0: a run a session of this server holds, a run open in a tab of any server (its
    watched file), and a run that finished within the hour stay."""
    now = time.time()
    for key in ("run-held", "run-open", "run-recent", "run-old"):
        folder = store.create(key, TrainConfig(**SMALL), key, "cpu", tmp_path)
        store.set_state(key, "finished", "", tmp_path)
        if key != "run-recent":
            for path in (folder, *folder.iterdir()):
                os.utime(path, (now - 2 * 3600,) * 2)
    store.touch_watched("run-open", tmp_path)
    deleted = store.cleanup(max_age_s=7 * 86400, max_total_bytes=0, root=tmp_path, now=now,
                            keep=frozenset({"run-held"}))
    assert deleted == ["run-old"]


def test_the_queue_says_about_when_a_run_starts():
    manager = JobManager(max_cpu=1, max_gpu=0, mode="thread")
    first = wait_until_training(manager.submit(TrainConfig(**{**SMALL, "epochs": 400}), TEXT, "s1"))
    second = manager.submit(TrainConfig(**SMALL), TEXT, "s2")
    third = manager.submit(TrainConfig(**{**SMALL, "hidden_size": SMALL["hidden_size"] + 1}), TEXT, "s3")  # not
    together = manager.submit(TrainConfig(**{**SMALL, "seed": 7}), TEXT, "s4")    # of second's shape: it trains with it
    try:
        while first.progress.epoch < 1:
            time.sleep(0.05)
        p = first.progress
        assert manager.position(second) == manager.position(together) == 1 and manager.position(third) == 2
        assert manager.eta(second) == pytest.approx(p.eta)                       # when the first ends
        assert manager.eta(third) == pytest.approx(p.eta + p.elapsed + p.eta)    # and one more run like it
        assert manager.eta(first) is None
    finally:
        for job in (together, third, second, first):
            manager.stop(job.id)
        first.thread.join(30)


def test_a_run_is_found_again_after_a_restart():
    """A finished run and a run whose server went away, opened by their addresses from a new server."""
    old = JobManager(max_cpu=1, max_gpu=0, mode="process")
    done = old.submit(TrainConfig(**SMALL), TEXT, "s1")
    done.thread.join(120)
    going = wait_until_training(old.submit(TrainConfig(**{**SMALL, "epochs": 500}), TEXT, "s1"))
    going.trainer.process.stdin.close()                           # the server stops: its worker saves and ends
    going.thread.join(60)
    new = JobManager(max_cpu=1, max_gpu=0, mode="process")  # a restarted server knows no run in memory
    again = new.adopt(done.token, "s9")
    assert again.status == "finished" and again.result.final == done.result.final
    assert again.samples == done.samples and again.progress.history == done.result.history
    assert new.adopt(going.token, "s9").status == "stopped"
    assert new.adopt("../../etc", "s9") is None and new.adopt("nosuchrun", "s9") is None


def test_a_run_training_in_another_web_process_is_followed_from_the_store():
    """Two web processes share the store: the second opens the first's live run and sees it finish."""
    first = JobManager(max_cpu=1, max_gpu=0, mode="process")
    job = wait_until_training(first.submit(TrainConfig(**{**SMALL, "epochs": 100}), TEXT, "s1"))
    second = JobManager(max_cpu=1, max_gpu=0, mode="process")
    seen = second.adopt(job.token, "s2")
    assert seen is not job and seen.active and seen.thread is not None
    seen.thread.join(120)
    assert seen.status == "finished" and seen.result.final.epoch == 100
    assert seen.progress.history == seen.result.history and seen.samples


def test_a_crashed_worker_marks_the_run_failed_and_keeps_its_curve():
    manager = JobManager(max_cpu=1, max_gpu=0, mode="process")
    job = wait_until_training(manager.submit(TrainConfig(**{**SMALL, "epochs": 500}), TEXT, "s1"))
    while job.progress.epoch < 2:
        time.sleep(0.05)
    os.kill(job.trainer.process.pid, signal.SIGKILL)
    job.thread.join(30)
    assert job.status == "error" and "exit code -9" in job.message and "curve so far is kept" in job.message
    live = tasks.read_live(job.token)
    assert live.status == "error" and live.progress.epoch >= 2 and len(live.progress.history) >= 3


def test_a_stop_file_stops_a_run_that_has_no_pipe(tmp_path):
    """How another web process (or the Ray backend) stops a run: the stop file in its folder."""
    store.create("run-stopme", TrainConfig(**{**SMALL, "epochs": 500}), "r", "cpu", tmp_path)
    request = {"config": TrainConfig(**{**SMALL, "epochs": 500}).to_dict(), "text": TEXT, "key": "run-stopme",
               "root": str(tmp_path)}
    import threading
    out = {}
    t = threading.Thread(target=lambda: out.update(worker.train_into_store(request)))
    t.start()
    deadline = time.time() + 60
    while tasks.read_live("run-stopme", tmp_path).progress is None and time.time() < deadline:
        time.sleep(0.1)
    store.request_stop("run-stopme", tmp_path)
    t.join(30)
    assert out["status"] == "stopped" and tasks.read_live("run-stopme", tmp_path).status == "stopped"
    assert (tmp_path / "run-stopme" / "weights.safetensors").exists()


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray", reason="Ray is optional: pip install -r requirements-ray.txt")
    # Ray 2.59+ turns token authentication on for local clusters and leaves its token in ~/.ray/auth_token, where a
    # later `ray start --head` on this machine would find it: a test leaves nothing behind.
    before = os.environ.get("RAY_AUTH_MODE")
    os.environ["RAY_AUTH_MODE"] = "disabled"
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"py_modules": [str(launchers.PROJECT / "core")]})
    yield ray
    ray.shutdown()
    if before is None:
        os.environ.pop("RAY_AUTH_MODE", None)
    else:
        os.environ["RAY_AUTH_MODE"] = before


def test_the_ray_backend_trains_a_run_end_to_end(local_ray, tmp_path, monkeypatch):
    monkeypatch.setenv("RNNLAB_RUNS_DIR", str(tmp_path))
    manager = JobManager(max_cpu=2, max_gpu=0, mode="ray")
    assert manager.gpus == 0
    job = manager.submit(TrainConfig(**{**SMALL, "epochs": 3}), TEXT, "s1")
    job.thread.join(180)
    assert job.status == "finished", job.message
    assert job.result.final.epoch == 3 and job.progress.history == job.result.history and job.samples
    assert job.trainer.ref is not None and (tmp_path / job.token / "weights.safetensors").exists()
    assert job.result.lm.net is not None                  # the weights load back from the store


def test_the_ray_backend_stops_a_run_and_keeps_what_it_learnt(local_ray, tmp_path, monkeypatch):
    monkeypatch.setenv("RNNLAB_RUNS_DIR", str(tmp_path))
    manager = JobManager(max_cpu=2, max_gpu=0, mode="ray")
    job = manager.submit(TrainConfig(**{**SMALL, "epochs": 500}), TEXT, "s1")
    deadline = time.time() + 120
    while (job.progress is None or job.progress.epoch < 1) and time.time() < deadline:
        time.sleep(0.2)
    manager.stop(job.id)
    job.thread.join(60)
    assert job.status == "stopped" and job.result.history[-1].epoch >= 1


def test_a_cuda_run_asks_ray_for_a_gpu(monkeypatch, tmp_path):
    """No GPU here: a stand-in for Ray records what the launcher asks for. A cluster with GPUs makes an `auto`
    run a CUDA run, and its task asks for one GPU (a CPU run for none)."""
    monkeypatch.setenv("RNNLAB_RUNS_DIR", str(tmp_path))
    asked = []

    class FakeRay:
        def cluster_resources(self):
            return {"CPU": 8.0, "GPU": 2.0}

        def remote(self, fn):
            class Task:
                def options(self, **kw):
                    asked.append(kw)
                    return self

                def remote(self, request):
                    store.set_state(request["key"], "error", "not really trained")
                    return "ref"
            return Task()

        def wait(self, refs, timeout=0):
            return refs, []

        def get(self, ref):
            return None

    monkeypatch.setattr(launchers, "ray_module", lambda: FakeRay())
    manager = JobManager(mode="ray")
    assert manager.gpus == 2 and manager.max_gpu == 2
    gpu = manager.submit(TrainConfig(**{**SMALL, "device": "auto"}), TEXT, "s1")
    cpu = manager.submit(TrainConfig(**{**SMALL, "device": "cpu"}), TEXT, "s2")
    gpu.thread.join(10)
    cpu.thread.join(10)
    assert gpu.device == "cuda" and cpu.device == "cpu"
    assert sorted(kw["num_gpus"] for kw in asked) == [0, 1] and all(kw["num_cpus"] == 1 for kw in asked)
    assert gpu.status == "error" and gpu.message == "not really trained"


def test_a_warm_pool_hands_over_a_started_worker_and_keeps_one_spare(monkeypatch):
    """Issue 29: Train hands its request to a worker that has already imported torch. Issue 65: a worker whose run
    ended comes back as the spare for the next run (no new process while one is out and coming back); one let go
    (its stdin closed: it ends quietly) is replaced at once."""
    from core.runs import launchers
    monkeypatch.setenv("RNNLAB_WARM_WORKERS", "1")
    pool = launchers.WarmPool()
    pool.fill()
    first = pool.spare[0]
    taken = pool.take()
    assert taken is first and taken.poll() is None and pool.spare == []
    pool.give_back(taken)
    assert pool.spare == [first] and pool.take() is first
    pool.discard(first)
    assert first.wait(timeout=60) == 0 and len(pool.spare) == 1 and pool.spare[0] is not first
    spare = pool.spare[0]
    spare.stdin.close()
    assert spare.wait(timeout=60) == 0
    monkeypatch.setenv("RNNLAB_WARM_WORKERS", "0")
    cold = launchers.WarmPool()
    cold.fill()
    assert cold.spare == []
    proc = cold.take()
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0 and cold.spare == []


class FakeWorker:
    def __init__(self):
        self.alive = True

    def poll(self):
        return None if self.alive else 0


def test_the_warm_pool_grows_with_a_burst_of_presses_up_to_the_slots(monkeypatch):
    """Issue 43: a burst of presses starts spares for the slots still free, never more than the runs trained at once
    (nor 4); a worker whose run ended comes back as a spare (issue 65); when the presses stop for a minute, the pool
    keeps only its base size again. Dead spares are replaced."""
    from core.runs import launchers
    monkeypatch.setenv("RNNLAB_WARM_WORKERS", "1")
    now = [0.0]
    pool = launchers.WarmPool(spawn=FakeWorker, clock=lambda: now[0])
    pool.slots = 3
    pool.fill()
    assert len(pool.spare) == 1
    first = pool.spare[0]
    a = pool.take()
    assert a is first and len(pool.spare) == 1                 # one press: one spare behind it
    b = pool.take()
    assert len(pool.spare) == 1                                # two slots busy: a spare for the third
    c = pool.take()
    assert pool.spare == []                                    # every slot busy: the next run waits for one back
    pool.give_back(a)
    assert pool.spare == [a]                                   # a worker whose run ended is the spare again
    a.alive = False
    now[0] = 61.0
    pool.fill()
    assert len(pool.spare) == 1 and pool.spare[0].alive and pool.spare[0] is not a   # the dead one replaced
    pool.give_back(b)
    pool.give_back(c)
    assert len(pool.spare) == 3                                # all back: kept while they train nothing
    pool.slots = 20
    for _ in range(10):
        pool.take()
    assert len(pool.spare) <= 4                                # never more than 4, whatever the slots
    monkeypatch.setenv("RNNLAB_WARM_WORKERS", "0")
    pool.spare.clear()
    pool.take()
    assert pool.spare == []                                    # 0: no spares at all, as asked


def test_the_server_starts_its_spare_worker_before_any_page_opens(monkeypatch):
    """Issue 43: python -m ui.serve fills the pool when runs train in processes, and not for Ray or threads."""
    from core.runs import launchers
    filled = []
    monkeypatch.setattr(launchers.POOL, "fill", lambda: filled.append(1))
    monkeypatch.delenv("RNNLAB_RAY_ADDRESS", raising=False)
    for mode, fills in (("process", 1), ("thread", 0), ("ray", 0)):
        monkeypatch.setenv("RNNLAB_TRAIN_IN", mode)
        filled.clear()
        launchers.warm_start()
        assert len(filled) == fills, mode
