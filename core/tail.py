"""A JSON-lines file read as it grows (a run's progress file): each call returns the objects on the lines added since
the last call. A last line the writer has not finished is left for the next call, and a damaged line is passed
over, so a reader can follow a file while another process appends to it."""
from __future__ import annotations

import json
from pathlib import Path


class JsonLines:
    def __init__(self, path: str | Path):
        self.path, self.offset = Path(path), 0

    def new(self) -> list[dict]:
        """The objects on the complete lines written since the last call (none when the file cannot be read yet)."""
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                chunk = f.read()
        except OSError:
            return []
        out = []
        for line in chunk.split(b"\n")[:-1]:   # the bytes after the last newline are still being written
            self.offset += len(line) + 1
            try:
                entry = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
            if isinstance(entry, dict):
                out.append(entry)
        return out
