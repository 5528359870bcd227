"""Sidebar facts that are costly to compute, cached once per server process."""
import streamlit as st

from core.nn.device import describe_device
from core.runs.worker import worker_threads
from ui.session import job_manager


@st.cache_resource(show_spinner=False)
def device_label() -> str:
    """Where the Training lab's runs train: this machine's device with the threads a run uses there (a training
    process's own, or this server's when runs train in its threads), or the Ray cluster they are sent to."""
    manager = job_manager()
    if manager.mode == "ray":
        return f"a Ray cluster ({manager.gpus} GPU{'' if manager.gpus == 1 else 's'})"
    return describe_device(threads=worker_threads() if manager.mode == "process" else None)
