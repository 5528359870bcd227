#!/usr/bin/env bash
# Install the app's packages and serve RNN Lab: bash scripts/run.sh [streamlit args]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python.sh   # PY: this Python, or a .venv when the system Python refuses pip
source scripts/install.sh run.sh

echo "run.sh: starting RNN Lab (Streamlit prints its address below; Ctrl+C stops it) ..."
exec "$PY" -m ui.serve "$@"   # streamlit run app.py, with the training workers started at once
