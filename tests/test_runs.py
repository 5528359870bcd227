"""Saved runs (core.runs): safetensors + JSON + CSV, loading back, refusing bad files, unwritable folders."""
import io
import json
import zipfile

import pytest
import torch

from core.runs import saved as R
from core.runs.config import TrainConfig
from core.sampling import sample
from core.runs.loop import train
from test_training import SMALL, TEXT


def test_save_load_round_trip_gives_identical_outputs(tmp_path):
    result = train(TrainConfig(**{**SMALL, "epochs": 1}), TEXT)
    R.save_run(result, tmp_path / "run")
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    assert meta["config"]["hidden_size"] == 24 and meta["history"]
    loaded = R.load_run(tmp_path / "run")
    tokens = torch.randint(0, len(result.lm.vocab), (2, 9))
    with torch.no_grad():
        assert torch.equal(result.lm.net.eval()(tokens)[0], loaded.net(tokens)[0])
    assert sample(result.lm, "the ", 30, 0.0).text == sample(loaded, "the ", 30, 0.0).text
    archive = zipfile.ZipFile(io.BytesIO(R.run_zip(result)))
    assert set(archive.namelist()) == {"weights.safetensors", "run.json", "metrics.csv"}


def test_loading_rejects_bad_files(tmp_path):
    result = train(TrainConfig(**{**SMALL, "epochs": 1}), TEXT)
    meta = R.run_metadata(result)
    with pytest.raises(ValueError, match="safetensors"):
        R.load_model(b"\x80\x04pickle", meta)
    bad = dict(meta, model={**meta["model"], "hidden_size": 7})
    with pytest.raises(ValueError, match="do not fit"):
        R.load_model(R.weights_bytes(result.lm.net), bad)
    with pytest.raises(ValueError, match="not an RNN Lab run"):
        R.load_model(b"", {})



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
