"""Saved runs: weights as safetensors (never pickle), settings and history as JSON, metrics as CSV, a .zip of
all three for downloading, and loading a run's model back (core.nn.weights rebuilds it)."""
from __future__ import annotations

import csv
import io
import os
import zipfile
from dataclasses import fields
from pathlib import Path

from safetensors.torch import save as st_save

from core import __version__
from core.assets import ASSETS, META, REBUILD, WEIGHTS
from core.nn.models import RNNLM
from core.nn.sampling import LanguageModel
from core.nn.weights import load_model
from core.runs.record import RUN_FORMAT, HistoryRow, RunFile

METRIC_COLUMNS = [f.name for f in fields(HistoryRow) if f.name not in ("val_ce", "sample")]   # metrics.csv


def run_file(result, extra: dict | None = None) -> RunFile:
    """Everything about a finished run (a core.runs.loop.TrainResult) except its weights: its run.json."""
    extra = dict(extra or {})
    best = extra.pop("best_epoch", None)
    return RunFile(result.config.to_dict(), result.lm.net.spec.to_dict(), result.lm.vocab.to_dict(), result.status,
                   result.message, result.device, result.elapsed, result.tokens_per_s, list(result.history),
                   result.lm.cleaning, best, RUN_FORMAT, __version__, extra)


def weights_bytes(net: RNNLM) -> bytes:
    tensors = {k: v.detach().to("cpu").contiguous() for k, v in net.state_dict().items()}
    return st_save(tensors)


def metrics_csv(history: list) -> str:
    """One line per epoch (core.runs.record.HistoryRow), the columns of METRIC_COLUMNS."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(METRIC_COLUMNS)
    for row in history:
        w.writerow([getattr(row, c) for c in METRIC_COLUMNS])
    return buf.getvalue()


def check_writable(out_dir: str | Path) -> Path:
    """Make out_dir (a folder) and check a file can be written in it, before any work is spent; ValueError
    saying why not."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".rnnlab-write-check"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise ValueError(f"Cannot write the run to {str(out)[:200]!r}: {exc.strerror or exc}. "
                         "Choose another folder with --out.") from None
    return out


def write_files(result, out: Path, extra: dict | None = None) -> None:
    """Write weights.safetensors + run.json + metrics.csv into the folder out, all or nothing: each goes to a
    temporary file first, and the three are renamed into place only once all are written (run.json last, so a
    reader that finds it finds the weights). OSError when the disk refuses (full, read-only)."""
    files = {"weights.safetensors": weights_bytes(result.lm.net), "metrics.csv": metrics_csv(result.history).encode(),
             "run.json": run_file(result, extra).to_json().encode()}
    written = []
    try:
        for name, data in files.items():
            tmp = out / f".{name}.tmp"
            written.append(tmp)
            tmp.write_bytes(data)
        for name in files:
            os.replace(out / f".{name}.tmp", out / name)
    finally:
        for tmp in written:
            tmp.unlink(missing_ok=True)


def save_run(result, out_dir: str | Path, extra: dict | None = None) -> Path:
    """Write weights.safetensors + run.json + metrics.csv into out_dir (all or nothing)."""
    out = check_writable(out_dir)
    try:
        write_files(result, out, extra)
    except OSError as exc:
        raise ValueError(f"Cannot write the run to {str(out)[:200]!r}: {exc.strerror or exc}.") from None
    return out


def run_zip(result) -> bytes:
    """The run as one .zip (weights, JSON, CSV) for downloading."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("weights.safetensors", weights_bytes(result.lm.net))
        z.writestr("run.json", run_file(result).to_json())
        z.writestr("metrics.csv", metrics_csv(result.history))
    return buf.getvalue()


def load_run(run_dir: str | Path, device: str = "cpu") -> LanguageModel:
    run_dir = Path(run_dir)
    try:
        meta = RunFile.from_json((run_dir / "run.json").read_bytes())
        weights = (run_dir / "weights.safetensors").read_bytes()
    except FileNotFoundError as exc:   # the file's name, not the folder's path (that may be a server's)
        raise ValueError(f"The run's {Path(exc.filename).name} is missing.") from None
    except OSError as exc:
        raise ValueError(f"The run's files cannot be read ({type(exc).__name__}).") from None
    return model_of(weights, meta, device)


def model_of(weights: bytes, run: RunFile, device: str = "cpu") -> LanguageModel:
    """The model a run's weights and run.json describe; its meta is run.json's data."""
    return load_model(weights, run.model, run.vocab, run.cleaning, run.to_dict(), device)


def load_pretrained(folder: str | Path = ASSETS, device: str = "cpu") -> LanguageModel:
    """Load the shipped model (safetensors + JSON; never unpickles). ValueError with a clear message when
    the files are missing or damaged."""
    folder = Path(folder)
    try:
        meta = RunFile.from_json((folder / META).read_bytes())
        weights = (folder / WEIGHTS).read_bytes()
    except FileNotFoundError as exc:
        raise ValueError(f"The pretrained model is missing ({Path(exc.filename).name} not found in {folder}). {REBUILD}") from None
    except (OSError, ValueError) as exc:
        raise ValueError(f"The pretrained model's metadata in {folder} cannot be read ({exc}). {REBUILD}") from None
    try:
        return model_of(weights, meta, device)
    except ValueError as exc:
        raise ValueError(f"The pretrained model in {folder} is damaged: {exc} {REBUILD}") from None
