"""Exercise answers computed once per server for every learner and every web process, and kept across restarts:
a solution is stored as JSON in the run store's folder (RNNLAB_RUNS_DIR/.exercise_answers/), keyed by the
exercise, its settings and the source of core/ (any change to the maths computes it afresh). Only the server
writes these files, and they are read as JSON, never unpickled. The folder's name is not a run's key, so the
store's cleanup leaves it alone.

The exercises whose computation trains a model (Exercise.trains) ship their answers with the app, for their
own settings and their "other setting": assets/exercise_answers.json, rebuilt by `python -m core exercises
--bake` and compared with a rebuild in tests/test_exercise_answers.py. A first learner's check then reads them.
"""
from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from pathlib import Path

from core.assets import ASSETS
from core.exercises.types import Exercise, Solution

FOLDER = ".exercise_answers"
CORE = Path(__file__).resolve().parent
SHIPPED = ASSETS / "exercise_answers.json"
FORMAT = "rnnlab-exercise-answers/1"


@cache
def code_version() -> str:
    """A digest of every source file of core/: what an answer was computed with."""
    digest = hashlib.sha1()
    for path in sorted(CORE.rglob("*.py")):
        digest.update(path.relative_to(CORE).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def answer_file(ex: Exercise, settings: dict, root: Path | None = None) -> Path:
    from core.runs.store import store_root
    from core.i18n import current
    key = json.dumps({"exercise": ex.key, "settings": settings, "code": code_version(), "lang": current()},
                     sort_keys=True)   # an explanation is in the language it was asked in
    return (root or store_root()) / FOLDER / f"{ex.key}-{hashlib.sha1(key.encode()).hexdigest()[:24]}.json"


def _plain(value):
    """numpy numbers as Python ones, for JSON."""
    return value.item() if hasattr(value, "item") else value


def to_json(sol: Solution) -> str:
    return json.dumps({"answer": _plain(sol.answer), "explanation": sol.explanation,
                       "numbers": {k: _plain(v) for k, v in sol.numbers.items()},
                       "mistakes": [[_plain(v), why] for v, why in sol.mistakes.items()]})


def from_json(text: str) -> Solution:
    d = json.loads(text)
    if not isinstance(d, dict) or not isinstance(d.get("explanation"), str):
        raise ValueError("not a stored answer")
    return Solution(d["answer"], d["explanation"], dict(d["numbers"]),
                    {float(v): str(why) for v, why in d["mistakes"]})


def shipped_key(ex: Exercise, settings: dict, lang: str = "en") -> str:
    """An answer's key in the shipped file: its explanation is in one language (English's keys name none)."""
    return json.dumps({"exercise": ex.key, "settings": settings, **({"lang": lang} if lang != "en" else {})},
                      sort_keys=True)


@cache
def shipped(path: Path = SHIPPED) -> dict:
    """The answers that ship with the app: shipped_key -> the solution's JSON ({} when the file is missing or
    not ours, or when RNNLAB_SHIPPED_ANSWERS=off: a server that computes every check itself, say after a change
    to core/ before the file is rebuilt)."""
    if os.environ.get("RNNLAB_SHIPPED_ANSWERS", "").strip().lower() in ("off", "0", "no"):
        return {}
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return d.get("answers", {}) if isinstance(d, dict) and d.get("format") == FORMAT else {}


def shipped_settings(ex: Exercise) -> list[dict]:
    """The settings whose answers ship: the exercise's own and its other setting's."""
    return [dict(ex.settings)] + ([{**ex.settings, **ex.other}] if ex.other else [])


def computed_with() -> dict:
    """What a run's last digits depend on besides its settings: torch's version, its CPU thread count (the
    passage run's held-out perplexity, a memorising model's, moves by tens between one thread and two) and the
    processor with the vector instructions torch uses on it (another processor's kernels round differently: the
    seed-1 passage run's numbers on an AMD EPYC were not those baked elsewhere)."""
    import torch
    return {"torch": torch.__version__, "threads": torch.get_num_threads(), "cpu": cpu_name(),
            "vector": torch.backends.cpu.get_cpu_capability()}


def cpu_name() -> str:
    """The processor's model name (Linux's /proc/cpuinfo), or the platform's word for it elsewhere."""
    import platform
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def bake(bank: dict[str, Exercise], path: Path = SHIPPED) -> dict:
    """Compute the answers of every exercise that trains, with each of its shipped settings, in each language, and
    write them."""
    from core.i18n import LANGS, speaking
    answers = {}
    for lang in LANGS:
        with speaking(lang):
            answers.update({shipped_key(ex, s, lang): json.loads(to_json(ex.run(s)))
                            for ex in bank.values() if ex.trains for s in shipped_settings(ex)})
    path.write_text(json.dumps({"format": FORMAT, "command": "python -m core exercises --bake",
                                "computed_with": computed_with(), "answers": answers}, indent=1, sort_keys=True)
                    + "\n", encoding="utf-8")
    shipped.cache_clear()
    return answers


def solve(ex: Exercise, settings: dict | None = None, root: Path | None = None) -> Solution:
    """The exercise's solution with these settings: stored by this server, shipped with the app, or computed now
    and stored for the next learner."""
    settings = {**ex.settings, **(settings or {})}
    path = answer_file(ex, settings, root)
    try:
        return from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        from core.i18n import current
        return from_json(json.dumps(shipped()[shipped_key(ex, settings, current())]))
    except (KeyError, ValueError, TypeError):
        pass
    sol = ex.run(settings)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(to_json(sol), encoding="utf-8")
        os.replace(tmp, path)
    except (OSError, TypeError, ValueError):   # a read-only store, or an answer JSON cannot hold: just not kept
        pass
    return sol
