#!/usr/bin/env bash
# Install the app's packages and serve RNN Lab: bash scripts/run.sh [streamlit args]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python.sh   # PY: this Python, or a .venv when the system Python refuses pip
"$PY" -m pip install -q --disable-pip-version-check -r requirements.txt
exec "$PY" -m streamlit run app.py "$@"
