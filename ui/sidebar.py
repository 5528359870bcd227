"""Sidebar facts that are costly to compute, cached once per server process."""
import streamlit as st

from core.device import describe_device


@st.cache_resource(show_spinner=False)
def device_label() -> str:
    return describe_device()
