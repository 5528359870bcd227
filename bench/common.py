"""Helpers for the benchmarks: timing AppTest reruns of a page, and the tiny size the tests run every bench at
(RNNLAB_BENCH_TINY=1, tests/test_benches.py), so that no bench rots unnoticed."""
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TINY = os.environ.get("RNNLAB_BENCH_TINY") == "1"


def size(full, tiny):
    """A bench's count: `full` when measuring, `tiny` when the tests only check that the bench still runs."""
    return tiny if TINY else full


def compile_bytecode() -> None:
    """Compile the project's Python files into __pycache__, as any second run does where Python may write its
    bytecode, and as the Docker image does when it is built. Timed processes then start from compiled code, like
    the installed packages beside them (torch, d2l), instead of compiling core/ anew each time (about 0.1 s a
    process here, where PYTHONDONTWRITEBYTECODE=1 keeps Python from saving what it compiled)."""
    import compileall
    for part in ("core", "ui", "pages", "bench"):
        compileall.compile_dir(str(ROOT / part), quiet=1)
    compileall.compile_file(str(ROOT / "app.py"), quiet=1)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rerun_ms(page: str, change, n: int | None = None, query: dict | None = None) -> list[float]:
    """Server time (ms) of n AppTest reruns of pages/<page>.py, calling change(at, i) before each."""
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=120)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    times = []
    for i in range(n or size(20, 2)):
        change(at, i)
        t0 = time.perf_counter()
        at.run()
        times.append(1000 * (time.perf_counter() - t0))
        assert not at.exception, at.exception
    return times


def summary(label: str, times: list[float], target_ms: float | None = None) -> str:
    med = statistics.median(times)
    out = f"{label}: median {med:.1f} ms (min {min(times):.1f}, max {max(times):.1f}, n={len(times)})"
    if target_ms is not None:
        out += f"; target < {target_ms:g} ms -> {'ok' if med < target_ms else 'MISSED'}"
    return out
