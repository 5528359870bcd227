"""Sidebar facts that are costly to compute, cached once per server process."""
import streamlit as st

from core.i18n import current, ngettext
from core.nn.device import describe_device
from core.runs.worker import worker_threads
from ui.session import job_manager


def device_label() -> str:
    """Where the Training lab's runs train: this machine's device with the threads a run uses there (a training
    process's own, or this server's when runs train in its threads), or the Ray cluster they are sent to; in the
    page's language."""
    return _device_label(current())


@st.cache_resource(show_spinner=False)
def _device_label(lang: str) -> str:
    manager = job_manager()
    if manager.mode == "ray":
        return ngettext("a Ray cluster ({n} GPU)", "a Ray cluster ({n} GPUs)", manager.gpus).format(n=manager.gpus)
    return describe_device(threads=worker_threads() if manager.mode == "process" else None)
