"""Finished runs leave the server's memory (core.runs.store) and training runs outside the server's interpreter
(core.runs.worker): what the class issue needs from one machine."""
import gc
import os
import time

import pytest

from core.runs import store
from core.runs.config import TrainConfig
from core.nn.models import RNNLM
from test_training import SMALL, TEXT
from core.runs.jobs import JobManager


def live_models() -> int:
    import warnings
    gc.collect()
    with warnings.catch_warnings():   # touching every object wakes torch's deprecation warnings
        warnings.simplefilter("ignore")
        return sum(isinstance(o, RNNLM) for o in gc.get_objects())


def wait_until_training(job, seconds: float = 60):
    deadline = time.monotonic() + seconds
    while job.progress is None and time.monotonic() < deadline:
        time.sleep(0.1)
    return job


@pytest.mark.parametrize("mode", ["process", "thread"])
def test_a_finished_run_is_on_disk_not_in_memory(mode):
    manager = JobManager(max_cpu=1, max_gpu=0, mode=mode)
    before = live_models()
    job = manager.submit(TrainConfig(**{**SMALL, "epochs": 2}), TEXT, "s1")
    job.thread.join(120)
    assert job.status == "finished" and isinstance(job.result, store.StoredRun)
    assert live_models() == before                       # the registry holds numbers, not a model
    folder = job.result.folder
    assert sorted(p.name for p in folder.iterdir()) == sorted(store.FILES + store.LIVE_FILES)
    lm = job.result.lm                                   # read back when a learner asks for it
    assert isinstance(lm.net, RNNLM) and job.result.final.epoch == 2
    del lm
    manager.forget(job.id)
    assert not folder.exists() and job.result is None    # forgotten runs leave the disk too


def test_training_runs_in_its_own_lower_priority_process():
    manager = JobManager(max_cpu=1, max_gpu=0, mode="process")
    job = wait_until_training(manager.submit(TrainConfig(**{**SMALL, "epochs": 500}), TEXT, "s1"))
    assert job.trainer.process is not None and job.trainer.process.pid != os.getpid()
    assert os.getpriority(os.PRIO_PROCESS, job.trainer.process.pid) >= os.getpriority(os.PRIO_PROCESS, 0) + 10
    manager.stop(job.id)
    job.thread.join(30)
    assert job.status == "stopped" and job.result.history[-1].step > 0   # what it learnt is kept


def test_a_run_whose_server_goes_away_stops_and_keeps_what_it_learnt():
    manager = JobManager(max_cpu=1, max_gpu=0, mode="process")
    job = wait_until_training(manager.submit(TrainConfig(**{**SMALL, "epochs": 500}), TEXT, "s1"))
    job.trainer.process.stdin.close()                            # as if the server had died
    job.thread.join(30)
    assert job.status == "stopped" and isinstance(job.result, store.StoredRun)


def test_run_keys_are_never_paths(tmp_path):
    for bad in ("../x", "a/b", "", "x" * 100, "..", "ab cd"):
        with pytest.raises(ValueError):
            store.run_folder(bad, tmp_path)
    assert store.run_folder("Ab-_09xyz", tmp_path) == tmp_path / "Ab-_09xyz"
