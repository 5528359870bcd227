"""python -m core train as a user runs it: a run saved where --out says, Ctrl-C keeping what was learnt, and
clear words for arguments it cannot use."""
import os
import signal
import subprocess
import sys

from apptest_util import ROOT
from core.runs.record import RunFile
from test_training import TEXT


def train_command(tmp_path, *extra):
    corpus = tmp_path / "text.txt"
    corpus.write_text(TEXT)
    return [sys.executable, "-m", "core", "train", "--preset", "tiny", "--device", "cpu", "--corpus", str(corpus),
            "--set", "batch_size=8", "--set", "num_steps=16", *extra]


def test_a_run_is_saved_where_out_says(tmp_path):
    done = subprocess.run(train_command(tmp_path, "--set", "epochs=2", "--out", str(tmp_path / "run")), cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "finished 2 epochs" in done.stdout and "saved to" in done.stdout
    meta = RunFile.from_json((tmp_path / "run" / "run.json").read_bytes())
    assert meta.status == "finished" and len(meta.history) == 3


def test_a_run_without_out_says_it_kept_nothing(tmp_path):
    """Issue 63: without --out the run saved nothing and did not say so."""
    done = subprocess.run(train_command(tmp_path, "--set", "epochs=1"), cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and "not saved: no --out folder was given" in done.stdout, done.stderr[-2000:]


def test_ctrl_c_stops_the_run_and_saves_what_it_learnt(tmp_path):
    proc = subprocess.Popen(train_command(tmp_path, "--set", "epochs=5000", "--out", str(tmp_path / "run")),
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONUNBUFFERED="1"))
    seen = ""
    while "epoch 1/" not in seen:            # wait for a state: the first epoch done
        char = proc.stderr.read(1)
        assert char, "the run ended before its first epoch"
        seen += char
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    assert "Traceback" not in err and "saving what was learnt" in err
    assert "stopped" in out and "everything learnt before the stop" in out
    meta = RunFile.from_json((tmp_path / "run" / "run.json").read_bytes())
    assert meta.status == "stopped" and meta.history[-1].step > 0
    assert (tmp_path / "run" / "weights.safetensors").stat().st_size > 0


def test_arguments_it_cannot_use_are_named(tmp_path):
    empty = subprocess.run(train_command(tmp_path, "--out", ""), cwd=ROOT, capture_output=True, text=True,
                           timeout=120)
    assert empty.returncode == 2 and "--out needs a folder name" in empty.stderr
    bare = subprocess.run(train_command(tmp_path, "--set", "epochs"), cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert bare.returncode == 2 and "--set epochs needs a value: --set epochs=VALUE" in bare.stderr
    unknown = subprocess.run(train_command(tmp_path, "--set", "epoch=3"), cwd=ROOT, capture_output=True, text=True,
                             timeout=120)
    assert unknown.returncode == 2 and "unknown setting 'epoch'" in unknown.stderr
