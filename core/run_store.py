"""Finished runs kept on disk, not in the server's memory: their numbers are small and stay in memory, their
weights are read back from safetensors only when a learner asks for them (sampling, download).

The store is a folder (RNNLAB_RUN_STORE, default the cache folder's runs/), one sub-folder per run named by
the run's unguessable token, holding what core.runs.save_run writes.
"""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path

from core.config import TrainConfig
from core.corpus import cache_dir
from core.train import RunRecord

ENV_STORE = "RNNLAB_RUN_STORE"
FILES = ("weights.safetensors", "run.json", "metrics.csv")
_KEY = re.compile(r"^[A-Za-z0-9_-]{6,64}$")


def store_root() -> Path:
    return Path(os.environ.get(ENV_STORE) or cache_dir() / "runs")


def run_folder(key: str, root: Path | None = None) -> Path:
    """The folder of the run with this key (a token of letters, digits, - and _; never a path)."""
    if not isinstance(key, str) or not _KEY.match(key):
        raise ValueError("A run's key is 6 to 64 letters, digits, '-' or '_'.")
    return (root or store_root()) / key


@dataclass
class StoredRun(RunRecord):
    """A finished run on disk: a core.train.RunRecord and its folder (lm is read from it on demand)."""

    folder: Path = Path()

    @property
    def lm(self):
        """The trained model, read back from the folder (never unpickled)."""
        from core.runs import load_run
        return load_run(self.folder)

    def zip_bytes(self) -> bytes:
        """The run's three files as one .zip, straight from the folder."""
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            for name in FILES:
                z.write(self.folder / name, name)
        return buf.getvalue()

    @classmethod
    def read(cls, folder: Path) -> "StoredRun":
        try:
            meta = json.loads((Path(folder) / "run.json").read_text(encoding="utf-8"))
            return cls(TrainConfig.from_dict(meta["config"]), meta["history"], meta["status"], meta["message"],
                       float(meta["elapsed_s"]), meta["device"], float(meta["tokens_per_s"]),
                       int(meta.get("best_epoch", 0)), folder=Path(folder))
        except (OSError, KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"The saved run in {Path(folder).name} cannot be read ({exc}).") from None


def save(result, key: str, root: Path | None = None) -> StoredRun:
    """Write a finished TrainResult to the store and return it as a StoredRun (its weights no longer needed
    in memory). ValueError when the store cannot be written."""
    from core.runs import save_run
    folder = save_run(result, run_folder(key, root), {"best_epoch": result.best_epoch})
    return StoredRun.read(folder)


def delete(key: str, root: Path | None = None) -> None:
    folder = run_folder(key, root)
    if folder.is_dir():
        shutil.rmtree(folder, ignore_errors=True)
