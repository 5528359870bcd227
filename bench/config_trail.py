"""How far a reader travels to follow a run's settings: every function of core/ that a run's TrainConfig
reaches (as an argument, or as the `config` of the object a method belongs to) and every function of core/ that
such a function calls, in the order a small run of the book preset first calls them, from core.runs.loop.train on. Prints the stops (functions), the files they are in, and the returns
(a stop in a file the trail had already left): fewer is a shorter read.

    python bench/config_trail.py [--list] [--root PATH]   (--root: another checkout, to compare)
"""

# tests/test_benches.py runs this bench at a tiny size (RNNLAB_BENCH_TINY=1) with each argument list here
TINY_RUNS = [[]]
NEEDS_CORPUS = False

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRESET = "book"   # the book's split: windows, validation chunks (the tiny preset reads whole streams)


def trail(root: Path) -> list[tuple[str, str]]:
    """(file, function) of each first call that sees the run's config, in order."""
    sys.path.insert(0, str(root))
    from core.runs.config import PRESETS
    from core.runs.loop import train
    from dataclasses import replace
    config = replace(PRESETS[PRESET].config, epochs=1, num_train=200, num_val=100)
    core = str(root / "core")
    seen, stops = set(), []

    def holds_config(frame) -> bool:
        for name, value in frame.f_locals.items():
            if value is config or (name == "self" and getattr(value, "config", None) is config):
                return True
        return False

    def profile(frame, event, arg):
        if event != "call":
            return
        path = frame.f_code.co_filename
        key = (path, frame.f_code.co_name, frame.f_code.co_firstlineno)
        caller = frame.f_back
        if frame.f_code.co_name.startswith("<"):   # a comprehension is read where it stands
            return
        if path.startswith(core) and key not in seen and (holds_config(frame) or (
                caller is not None and caller.f_code.co_filename.startswith(core) and holds_config(caller))):
            seen.add(key)
            stops.append((str(Path(path).relative_to(root)), frame.f_code.co_name))

    text = "the time machine by h g wells " * 400
    sys.setprofile(profile)
    try:
        train(config, text)
    finally:
        sys.setprofile(None)
    return stops


def summary(stops: list[tuple[str, str]]) -> tuple[int, int, int]:
    files, returns, current = [], 0, None
    for path, _ in stops:
        if path != current:
            if path in files:
                returns += 1
            files.append(path)
            current = path
    return len(stops), len(set(files)), returns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(ROOT))
    parser.add_argument("--list", action="store_true", help="print every stop")
    args = parser.parse_args()
    stops = trail(Path(args.root).resolve())
    if args.list:
        for path, name in stops:
            print(f"  {path}: {name}")
    n, files, returns = summary(stops)
    print(f"{n} stops in {files} files, {returns} returns to a file already left")


if __name__ == "__main__":
    main()
