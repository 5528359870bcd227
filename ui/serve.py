"""Serve RNN Lab: `python -m ui.serve [streamlit run's options]` is `streamlit run app.py [options]`, plus what a
server should have ready before its first learner arrives:

- the spare training workers start with the server (core.runs.launchers.warm_start), so the first Train press
  hands its run to a worker that has already imported torch, as the hundredth does;
- the web process imports what every page needs beyond Streamlit's own imports (torch, the run machinery, the
  lab registry, the plot helpers) in the background while Streamlit starts, so the first page open does not pay
  for it.

`streamlit run app.py` still works: then the workers start when the first page opens (ui.session.job_manager).
"""
from __future__ import annotations

import sys
import threading
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "app.py"


IMPORTING: threading.Thread | None = None   # the imports ahead, while they run


class _Quiet:
    """A logging filter for the two lines a newcomer took for failures: Streamlit's "Did not auto detect external
    IP" (this server has no way out to ask; the Local and Network URLs it prints are the ones that matter) and
    "missing ScriptRunContext" from the app's own warm-up thread (its cached computations run outside any page,
    on purpose)."""

    @staticmethod
    def filter(record) -> bool:
        text = record.getMessage()
        return not ("Did not auto detect external IP" in text or
                    ("missing ScriptRunContext" in text and record.threadName.startswith("rnnlab-")))


def quiet_logs() -> None:
    """Install _Quiet on the loggers that print those lines (once: a second call adds nothing)."""
    import logging
    for name in ("streamlit.net_util", "streamlit.runtime.scriptrunner_utils.script_run_context"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _Quiet) for f in logger.filters):
            logger.addFilter(_Quiet())


def import_ahead() -> None:
    """The slow imports of a first page open, done before it (errors are left for the page to report)."""
    try:
        import core.runs.jobs  # noqa: F401  (torch)
        import core.labs  # noqa: F401
        import ui.plots  # noqa: F401
    except Exception:   # noqa: BLE001 - a page that needs it says what is wrong
        pass


def imports_done() -> None:
    """Called by app.py before each page runs: wait until the imports ahead are over (at once, after the first
    seconds), so that no page runs beside a half-imported module."""
    if IMPORTING is not None:
        IMPORTING.join()


def main(argv: list[str]) -> int:
    global IMPORTING
    from core.runs import launchers
    launchers.warm_start()
    from streamlit.web import cli   # first: Streamlit imports plotly and pandas itself, in this thread
    quiet_logs()
    IMPORTING = threading.Thread(target=import_ahead, name="rnnlab-import-ahead", daemon=True)
    IMPORTING.start()
    sys.argv = ["streamlit", "run", str(APP), *argv]
    return cli.main()


if __name__ == "__main__":
    from ui import serve   # this module by its name, where app.py finds IMPORTING (not __main__'s copy)
    sys.exit(serve.main(sys.argv[1:]))
