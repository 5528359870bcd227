"""Saved runs (core.runs): safetensors + JSON + CSV, loading back, refusing bad files, unwritable folders."""
import io
import typing
import zipfile
from dataclasses import replace

import pytest
import torch

from core.nn.weights import load_model
from core.runs import saved as R
from core.runs.config import TrainConfig
from core.nn.sampling import sample
from core.runs.loop import train
from test_training import SMALL, TEXT


def test_save_load_round_trip_gives_identical_outputs(tmp_path):
    result = train(TrainConfig(**{**SMALL, "epochs": 1}), TEXT)
    R.save_run(result, tmp_path / "run")
    meta = R.RunFile.from_json((tmp_path / "run" / "run.json").read_bytes())
    assert meta.config["hidden_size"] == 24 and meta.history
    loaded = R.load_run(tmp_path / "run")
    tokens = torch.randint(0, len(result.lm.vocab), (2, 9))
    with torch.no_grad():
        assert torch.equal(result.lm.net.eval()(tokens)[0], loaded.net(tokens)[0])
    assert sample(result.lm, "the ", 30, 0.0).text == sample(loaded, "the ", 30, 0.0).text
    archive = zipfile.ZipFile(io.BytesIO(R.run_zip(result)))
    assert set(archive.namelist()) == {"weights.safetensors", "run.json", "metrics.csv"}


def test_loading_rejects_bad_files(tmp_path):
    result = train(TrainConfig(**{**SMALL, "epochs": 1}), TEXT)
    meta = R.run_file(result)
    with pytest.raises(ValueError, match="safetensors"):
        R.model_of(b"\x80\x04pickle", meta)
    bad = replace(meta, model={**meta.model, "hidden_size": 7})
    with pytest.raises(ValueError, match="do not fit"):
        R.model_of(R.weights_bytes(result.lm.net), bad)
    with pytest.raises(ValueError, match="not an RNN Lab run"):
        R.RunFile.from_dict({})
    with pytest.raises(ValueError, match="not an RNN Lab run"):
        load_model(b"", None, {})


def test_an_unwritable_folder_is_refused_before_training(tmp_path, capsys):
    from core.runs.cli import main
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(ValueError, match="Cannot write"):
        R.check_writable(blocker / "run")
    corpus = tmp_path / "text.txt"
    corpus.write_text(TEXT)
    code = main(["--preset", "tiny", "--corpus", str(corpus), "--out", str(blocker), "--set", "epochs=1"])
    assert code == 2 and "Cannot write" in capsys.readouterr().err


OPTIMIZERS = {"sgd": ("PlainSGD", "SGD"), "adam": ("PlainAdamW", "AdamW")}   # TrainConfig.optimizer's choices


@pytest.mark.parametrize("weight_decay", [0.0, 0.05])
@pytest.mark.parametrize("cosine", [False, True])
@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
def test_the_runs_optimizers_move_the_weights_exactly_as_torch_optims(optimizer, cosine, weight_decay):
    """core.nn.optim against torch.optim (and the cosine schedule against CosineAnnealingLR, run past its end,
    where torch's climbs again): identical weights and learning rates, bit for bit, step after step; a parameter
    without a gradient stays put in both, one that gets its first gradient late starts its own step count."""
    from core.nn import optim
    ours_kind, theirs_kind = getattr(optim, OPTIMIZERS[optimizer][0]), getattr(torch.optim, OPTIMIZERS[optimizer][1])
    assert set(OPTIMIZERS) == set(typing.get_args(typing.get_type_hints(TrainConfig)["optimizer"]))
    torch.manual_seed(0)
    start = [torch.randn(7, 5), torch.randn(5), torch.randn(3), torch.randn(4)]
    ours, theirs = ([torch.nn.Parameter(t.clone()) for t in start] for _ in range(2))
    ours_opt = ours_kind(ours, lr=0.05, weight_decay=weight_decay)
    theirs_opt = theirs_kind(theirs, lr=0.05, weight_decay=weight_decay)
    scheds = (optim.CosineSchedule(ours_opt, 5),
              torch.optim.lr_scheduler.CosineAnnealingLR(theirs_opt, 5)) if cosine else (None, None)
    for step in range(13):
        grads = [torch.randn_like(t) for t in start]
        for params, opt, sched in zip((ours, theirs), (ours_opt, theirs_opt), scheds):
            opt.zero_grad(set_to_none=True)
            for i in [0, 1] + [3] * (step >= 4):   # params[2] never gets a gradient
                params[i].grad = grads[i].clone()
            opt.step()
            if sched is not None:
                sched.step()
        assert ours_opt.lr == theirs_opt.param_groups[0]["lr"], step
        for a, b in zip(ours, theirs):
            assert torch.equal(a, b), step
    assert torch.equal(ours[2], start[2]) and not torch.equal(ours[3], start[3])


@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
def test_a_run_does_not_import_torchs_compiler(optimizer):
    """torch.optim's first optimizer imports torch._dynamo (about 1.5 s of CPU and 70 MB in every training
    process): a run with either optimizer and the cosine schedule needs none of it."""
    settings = dict(SMALL, optimizer=optimizer, lr=1.0 if optimizer == "sgd" else 0.01, lr_decay="cosine")
    code = ("import sys; from core.runs.config import TrainConfig; from core.runs.loop import train; "
            f"train(TrainConfig(**{settings!r}), text={TEXT[:3000]!r}); print('torch._dynamo' in sys.modules)")
    import subprocess
    import sys
    from pathlib import Path
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "False"


def test_the_optimizers_refuse_a_rate_they_cannot_use():
    from core.nn.optim import CosineSchedule, PlainAdamW
    w = [torch.nn.Parameter(torch.zeros(2))]
    for lr, decay in ((0.0, 0.0), (float("nan"), 0.0), (0.1, -1.0)):
        with pytest.raises(ValueError, match="learning rate|Weight decay"):
            PlainAdamW(w, lr, decay)
    with pytest.raises(ValueError, match="number of steps must be at least 1"):
        CosineSchedule(PlainAdamW(w, 0.1), 0)


def test_a_training_process_leaves_a_core_and_the_label_says_how_many_threads(monkeypatch):
    import os
    from core.nn.device import describe_device
    from core.runs.worker import worker_threads
    monkeypatch.delenv("RNNLAB_WORKER_THREADS", raising=False)
    assert worker_threads() == max(1, (os.cpu_count() or 2) - 1)
    monkeypatch.setenv("RNNLAB_WORKER_THREADS", "3")
    assert worker_threads() == 3 and worker_threads(5) == 5
    assert describe_device("cpu", threads=1) == "CPU (1 thread)"
    assert describe_device("cpu", threads=3) == "CPU (3 threads)"


def test_a_run_trains_on_the_threads_its_config_names_and_gives_them_back():
    """TrainConfig.threads: 0 keeps the process's count; a number holds for the run (read in its progress
    callback) and the process's count is back after it, also when the run fails or two runs overlap."""
    from core.nn.device import cpu_threads
    from core.runs.config import PRESETS
    assert PRESETS["passage"].config.threads == 1     # Act 4's run repeats itself whatever the machine's cores
    process = torch.get_num_threads()
    torch.set_num_threads(3)                          # a count that no block below sets
    try:
        runs_restore_the_process_count(3)
    finally:
        torch.set_num_threads(process)
    for bad in (-1, 257, 1.5):
        with pytest.raises(ValueError, match="threads"):
            TrainConfig(threads=bad)
        with pytest.raises(ValueError, match="threads"), cpu_threads(bad):
            pass


def runs_restore_the_process_count(before: int) -> None:
    from core.nn.device import cpu_threads
    seen = []
    for n in (0, 1, 2):
        train(TrainConfig(**{**SMALL, "epochs": 1, "threads": n}), text=TEXT,
              on_progress=lambda p: seen.append(torch.get_num_threads()))
        assert set(seen) == {n or before} and torch.get_num_threads() == before
        seen.clear()
    with pytest.raises(RuntimeError), cpu_threads(2):
        raise RuntimeError("a run that fails")
    assert torch.get_num_threads() == before
    first, second = cpu_threads(1), cpu_threads(1)   # two checks training at once in one server, ending out of order
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert torch.get_num_threads() == 1               # the second still trains on its one thread
    second.__exit__(None, None, None)
    assert torch.get_num_threads() == before


def test_a_runs_device_and_threads_are_checked_and_set_together():
    """run_device: the device a run asks for, checked with its threads before either is used; the threads within
    the block, on the CPU only, and the count before it back after."""
    from core.nn.device import DEVICES, resolve_device, run_device
    before = torch.get_num_threads()
    for name, threads, what in (("gpu", 1, "device"), ("cpu", -1, "threads"), ("auto", 1.5, "threads")):
        with pytest.raises(ValueError, match=what), run_device(name, threads):
            pass
    assert torch.get_num_threads() == before
    with run_device("cpu", 1) as device:
        assert device == torch.device("cpu") and torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with run_device("auto") as device:
        assert device == resolve_device("auto") and torch.get_num_threads() == before
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA GPU"), run_device("cuda", 1):
            pass
    assert "cuda" in DEVICES


def test_the_last_report_and_the_result_give_the_same_time_and_speed():
    """A worker writes each report to a file; the result used to read the clock after the last one was written,
    so the page's figures (from the report) and the runs table (from the result) disagreed by that write."""
    import time
    reports = []

    def slow_writer(p):       # the last report takes a while to write, as on a busy server
        reports.append(p)
        if p.eta == 0.0:
            time.sleep(0.2)
    result = train(TrainConfig(**{**SMALL, "epochs": 1}), TEXT, on_progress=slow_writer)
    assert reports[-1].elapsed == result.elapsed and reports[-1].tokens_per_s == result.tokens_per_s
