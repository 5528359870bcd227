"""Streamlit-side helpers shared by the lab pages (widgets bound to the URL, error display, sources)."""
