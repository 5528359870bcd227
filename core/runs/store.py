"""The run store: every training run is a folder on disk, so a run outlives its browser tab, the web process
that started it (a restart, or another of several web processes) and the server's memory.

The store is a folder (RNNLAB_RUNS_DIR, default the cache folder's runs/; RNNLAB_RUN_STORE is still read), one
sub-folder per run named by the run's unguessable token (never by anything a learner typed), holding:
- request.json: the run's settings, name and device, written when it is submitted;
- state.json: queued | running | finished | stopped | diverged | time limit | error, and a message (replaced
  atomically, so a reader never sees half of it);
- progress.jsonl: one line per progress report, appended by whoever trains it (a reader skips a half-written
  last line, so it can read while the run writes);
- stop: present once someone asked the run to stop (any web process may ask; the trainer polls it);
- weights.safetensors, run.json, metrics.csv: the finished run (core.runs.saved.save_run), weights read back only
  when a learner asks for them (sampling, download).
Old runs are deleted by age and total size (cleanup), never a run that is still going.
"""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from core.runs.config import TrainConfig
from core.runs.record import Progress, RunFile, RunRecord, Status, rows_from
from core.tail import JsonLines
from core.text.corpus import cache_dir

ENV_STORE = "RNNLAB_RUNS_DIR"
ENV_STORE_OLD = "RNNLAB_RUN_STORE"
FILES = ("weights.safetensors", "run.json", "metrics.csv")   # the saved run, as downloaded
LIVE_FILES = ("request.json", "state.json", "progress.jsonl")  # the run while it goes (and after)
_KEY = re.compile(r"[A-Za-z0-9_-]{6,64}")


def store_root() -> Path:
    return Path(os.environ.get(ENV_STORE) or os.environ.get(ENV_STORE_OLD) or cache_dir() / "runs")


def is_key(key) -> bool:
    """Whether key can name a run: 6 to 64 ASCII letters, digits, '-' or '_' and nothing else."""
    return isinstance(key, str) and _KEY.fullmatch(key) is not None


def run_folder(key: str, root: Path | None = None) -> Path:
    """The folder of the run with this key (a token of letters, digits, - and _; never a path)."""
    if not is_key(key):
        raise ValueError("A run's key is 6 to 64 letters, digits, '-' or '_'.")
    return (root or store_root()) / key


@dataclass
class StoredRun(RunRecord):
    """A finished run on disk: a core.runs.record.RunRecord and its folder (lm is read from it on demand)."""

    folder: Path = Path()

    @property
    def lm(self):
        """The trained model, read back from the folder (never unpickled)."""
        from core.runs.saved import load_run
        return load_run(self.folder)

    def missing(self) -> list[str]:
        """The run's files that are not in its folder any more (deleted, or never written)."""
        return [name for name in FILES if not (self.folder / name).is_file()]

    def zip_bytes(self) -> bytes:
        """The run's three files as one .zip, straight from the folder; ValueError naming a file that is gone."""
        buf = io.BytesIO()
        try:
            with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
                for name in FILES:
                    z.write(self.folder / name, name)
        except OSError:
            raise ValueError(f"The run's {', '.join(self.missing()) or 'files'} cannot be read from the run store "
                             "any more: it may have been cleaned up.") from None
        return buf.getvalue()

    @classmethod
    def read(cls, folder: Path) -> "StoredRun":
        try:
            run = RunFile.from_json((Path(folder) / "run.json").read_bytes())
            return cls(TrainConfig.from_dict(run.config), run.history, run.status, run.message, run.elapsed_s,
                       run.device, run.tokens_per_s, run.best_epoch or 0, folder=Path(folder))
        except FileNotFoundError:
            raise ValueError("The saved run's run.json is not in the run store (it may have been cleaned "
                             "up).") from None
        except (OSError, ValueError) as exc:
            raise ValueError(f"The saved run's run.json is damaged ({str(exc)[:120]}).") from None


def _unwritable(exc: OSError, doing: str, root: Path) -> ValueError:
    """What a learner is told when the store refuses a write: the setting, not the server's path (that goes to the
    server's log)."""
    print(f"run store ({root}): {doing}: {exc!r}", file=sys.stderr)
    return ValueError(f"The run store ({ENV_STORE}) cannot be written: {exc.strerror or exc}.")


def save(result, key: str, root: Path | None = None) -> StoredRun:
    """Write a finished TrainResult to the store, all or nothing, and return it as a StoredRun (its weights no
    longer needed in memory). ValueError when the store cannot be written, saying what is kept."""
    from core.runs.saved import write_files
    folder = run_folder(key, root)
    try:
        write_files(result, folder, {"best_epoch": result.best_epoch})
    except OSError as exc:
        raise ValueError(f"{_unwritable(exc, 'saving a run', folder.parent)} The run's weights could not be "
                         "saved; its curve so far is kept.") from None
    return StoredRun.read(folder)


def check_space(config: TrainConfig, root: Path | None = None) -> None:
    """ValueError when the store's disk has too little room to save this run (its weights at most 256 token
    types for characters, with JSON and CSV beside them), before any time is spent training it."""
    from core.runs.budget import FLOAT, plan_run
    vocab = config.bpe_vocab if config.tokenizer == "bpe" else 256
    need = FLOAT * plan_run(config, vocab).params + 2 * config.epochs * 2_000 + 5_000_000
    root = root or store_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(root).free
    except OSError as exc:
        raise _unwritable(exc, "checking free space", root) from None
    if free < need:
        raise ValueError(f"The run store ({ENV_STORE}) has {free / 1e6:,.0f} MB free and this run needs about "
                         f"{need / 1e6:,.0f} MB to be saved: lower the hidden units, or ask whoever runs this "
                         "server to free some space.")


def delete(key: str, root: Path | None = None) -> None:
    folder = run_folder(key, root)
    if folder.is_dir():
        shutil.rmtree(folder, ignore_errors=True)


# ---- a run while it goes: request, state, progress, stop -------------------------------------------------------

def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def create(key: str, config, name: str, device: str, root: Path | None = None) -> Path:
    """Start a run's folder: its request (its kind of run, core.runs.tasks, and its settings) and the state
    "queued". ValueError when the store cannot be written."""
    folder = run_folder(key, root)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _write_atomically(folder / "request.json", json.dumps(
            {"task": getattr(config, "TASK", "lm"), "config": config.to_dict(), "name": name, "device": device,
             "created": time.time()}))
        set_state(key, Status.QUEUED, "", root)
    except OSError as exc:
        raise _unwritable(exc, "creating a run", folder.parent) from None
    return folder


def set_state(key: str, status: Status, message: str = "", root: Path | None = None) -> None:
    folder = run_folder(key, root)
    if folder.is_dir():
        _write_atomically(folder / "state.json", json.dumps(
            {"status": str(Status.parse(status)), "message": message, "updated": time.time()}))


class ProgressWriter:
    """Appends a run's progress reports to its progress file: each line holds the report without its history,
    plus the history rows that are new since the line before (so the file grows with the run, not its square)."""

    def __init__(self, key: str, root: Path | None = None):
        self.path = run_folder(key, root) / "progress.jsonl"
        self.rows_written = 0

    def write(self, progress: Progress) -> None:
        rows = [row.to_dict() for row in progress.history[self.rows_written:]]
        line = json.dumps({"p": progress.to_dict(with_history=False), "rows": rows})
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line + "\n")
        self.rows_written = len(progress.history)


def request_stop(key: str, root: Path | None = None) -> None:
    folder = run_folder(key, root)
    if folder.is_dir():
        (folder / "stop").touch()


def stop_requested(key: str, root: Path | None = None) -> bool:
    return (run_folder(key, root) / "stop").exists()


def read_json(path: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path.name} does not hold an object")
    return data


class ProgressReader:
    """Reads a run's progress file as it grows: each read() parses only the lines added since the last one and
    returns the latest report with the whole history, or None when nothing new has come. A last line the
    trainer is still writing is left for the next read, so this can read while the run writes."""

    def __init__(self, folder: Path):
        self.lines = JsonLines(Path(folder) / "progress.jsonl")
        self.history: list = []
        self.latest: Progress | None = None

    def read(self) -> Progress | None:
        new = None
        for entry in self.lines.new():
            try:
                rows = rows_from(entry["rows"], "a progress line's rows")
                self.history.extend(rows)
                new = Progress.from_dict(entry["p"], list(self.history))
            except (KeyError, TypeError, ValueError):
                continue   # a damaged line is passed over; the rest of the file still counts
        if new is not None:
            self.latest = new
        return new


def read_progress(folder: Path) -> Progress | None:
    """The run's latest progress report with its whole history, from the progress file (None before any)."""
    reader = ProgressReader(folder)
    reader.read()
    return reader.latest


def last_activity(key: str, root: Path | None = None) -> float:
    """When anything last wrote to the run's state or progress (0 when neither can be read)."""
    folder = run_folder(key, root)
    times = [0.0]
    for name in ("state.json", "progress.jsonl"):
        try:
            times.append((folder / name).stat().st_mtime)
        except OSError:
            pass
    return max(times)


def read_state(key: str, root: Path | None = None) -> tuple[Status, str] | None:
    """The run's status and message, or None when its state cannot be read (yet)."""
    try:
        state = read_json(run_folder(key, root) / "state.json")
        return Status.parse(state["status"]), str(state["message"])
    except (OSError, KeyError, TypeError, ValueError):
        return None


# ---- cleanup ---------------------------------------------------------------------------------------------------

def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def touch_watched(key: str, root: Path | None = None) -> None:
    """Mark the run as open in someone's tab now (any web process): cleanup leaves it alone for a while."""
    folder = run_folder(key, root)
    if folder.is_dir():
        (folder / "watched").touch()


def cleanup(max_age_s: float, max_total_bytes: float, root: Path | None = None, now: float | None = None,
            stale_s: float = 6 * 3600, keep: frozenset = frozenset(), recent_s: float = 3600) -> list[str]:
    """Delete runs older than max_age_s, then the oldest until the store holds at most max_total_bytes. Never
    deleted: a run still going (queued or running, its state touched within stale_s), a run in `keep` (held by
    this server's sessions), and a run written to or open in a tab (its watched file) within recent_s. Returns
    the deleted keys."""
    root = root or store_root()
    now = time.time() if now is None else now
    runs, total = [], 0
    for folder in (root.iterdir() if root.is_dir() else []):
        if not folder.is_dir() or not is_key(folder.name):
            continue
        size = _size(folder)
        total += size   # runs that go count towards the total too, though they are never deleted
        try:
            state = read_json(folder / "state.json")
            going = Status.parse(state.get("status")).active and now - float(state.get("updated", 0)) < stale_s
        except (OSError, ValueError, TypeError, AttributeError):
            going = False
        touched = max([last_activity(folder.name, root)] + [p.stat().st_mtime for p in [folder / "watched"]
                                                           if p.exists()])
        if not going and folder.name not in keep and now - touched >= recent_s:
            runs.append((folder.stat().st_mtime, folder.name, folder, size))
    runs.sort()
    deleted = []
    for mtime, _, folder, size in runs:
        if now - mtime > max_age_s or total > max_total_bytes:
            total -= size
            shutil.rmtree(folder, ignore_errors=True)
            deleted.append(folder.name)
    return deleted


def cleanup_from_env(root: Path | None = None, keep: frozenset = frozenset()) -> list[str]:
    """cleanup() with the limits in RNNLAB_RUNS_MAX_AGE_DAYS (default 7) and RNNLAB_RUNS_MAX_MB (default 2000)."""
    days = float(os.environ.get("RNNLAB_RUNS_MAX_AGE_DAYS", "7"))
    mb = float(os.environ.get("RNNLAB_RUNS_MAX_MB", "2000"))
    return cleanup(days * 86400, mb * 1e6, root, keep=keep)
