"""python -m core classroom {check,set-aside}: check the class records file, or set a damaged one aside (kept,
renamed) so that fresh records start: what a teacher does on the Class page, for whoever runs the server."""
from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path

from core.classroom.db import database
from core.classroom.faults import StorageFault, check_once, forget, set_aside


def main(argv: list[str]) -> int:
    """python -m core classroom set-aside: set a damaged class records file aside (the runs folder's, or --root)."""
    parser = argparse.ArgumentParser(prog="python -m core classroom",
                                     description="The class records: set a damaged file aside so fresh ones start.")
    parser.add_argument("action", choices=["check", "set-aside"])
    parser.add_argument("--root", type=Path, default=None, help="the runs folder (default: RNNLAB_RUNS_DIR)")
    args = parser.parse_args(argv)
    path = database(args.root)
    if not path.exists():
        print(f"No class records at {path}.")
        return 0
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        forget(path)
        check_once(conn, path)
        print(f"{path}: the integrity check passes." + (" Nothing set aside." if args.action == "set-aside" else ""))
        return 0
    except StorageFault as exc:
        if args.action == "check":
            print(f"{path}: {exc}")
            return 1
    finally:
        conn.close()
    kept = set_aside(path)
    print(f"Set aside as {kept}; fresh class records start at {path} with the next page opened.")
    return 0
