#!/usr/bin/env bash
# Install the app's packages and serve RNN Lab: bash scripts/run.sh [streamlit args]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
"$PY" -m pip install -q --disable-pip-version-check -r requirements.txt
exec "$PY" -m streamlit run app.py "$@"
