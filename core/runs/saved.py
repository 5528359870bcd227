"""Saved runs: weights as safetensors (never pickle), settings and history as JSON, metrics as CSV, a .zip of
all three for downloading, and loading a run's model back (core.nn.weights rebuilds it)."""
from __future__ import annotations

import csv
import io
import json
import os
import zipfile
from pathlib import Path

from safetensors.torch import save as st_save

from core import __version__
from core.nn.models import RNNLM
from core.nn.sampling import LanguageModel
from core.nn.weights import load_model

FORMAT = "rnnlab-run/1"
METRIC_COLUMNS = ["epoch", "step", "train_ppl", "val_ppl", "val_bpb", "elapsed", "tokens_per_s"]


def run_metadata(result, extra: dict | None = None) -> dict:
    """Everything about a finished run (a core.train.TrainResult) except its weights, as plain JSON data."""
    return {
        "format": FORMAT,
        "rnnlab_version": __version__,
        "config": result.config.to_dict(),
        "model": result.lm.net.spec.to_dict(),
        "vocab": result.lm.vocab.to_dict(),
        "cleaning": result.lm.cleaning,
        "status": str(result.status),
        "message": result.message,
        "device": result.device,
        "elapsed_s": round(result.elapsed, 3),
        "tokens_per_s": round(result.tokens_per_s, 1),
        "history": [row.to_dict() for row in result.history],
        **(extra or {}),
    }


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
             "run.json": json.dumps(run_metadata(result, extra), indent=1).encode()}
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
        z.writestr("run.json", json.dumps(run_metadata(result), indent=1))
        z.writestr("metrics.csv", metrics_csv(result.history))
    return buf.getvalue()


def load_run(run_dir: str | Path, device: str = "cpu") -> LanguageModel:
    run_dir = Path(run_dir)
    try:
        meta = json.loads((run_dir / "run.json").read_text())
        weights = (run_dir / "weights.safetensors").read_bytes()
    except FileNotFoundError as exc:   # the file's name, not the folder's path (that may be a server's)
        raise ValueError(f"The run's {Path(exc.filename).name} is missing.") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"The run's files cannot be read ({type(exc).__name__}).") from None
    return load_model(weights, meta, device)
