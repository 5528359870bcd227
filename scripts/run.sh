#!/usr/bin/env bash
# Install the app's packages and serve RNN Lab: bash scripts/run.sh [streamlit args]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python.sh   # PY: this Python, or a .venv when the system Python refuses pip
packages=$(grep -Eo '^[A-Za-z0-9_.-]+==[^ #]+' requirements.txt | tr '\n' ' ')
echo "run.sh: installing RNN Lab's packages into $PY: $packages"
echo "run.sh: the first time this downloads about 2 GB (PyTorch is most of it) and takes a few minutes; later, seconds."
started=$SECONDS
"$PY" -m pip install -q --disable-pip-version-check -r requirements.txt
echo "run.sh: packages ready after $((SECONDS - started)) s."

# The Time Machine corpus: RNNLAB_CORPUS when set, else a copy beside the clone (as the tests use), else the
# app's cache or a download on first use. Runs are kept in RNNLAB_RUNS_DIR (default: the cache's runs/).
if [ -z "${RNNLAB_CORPUS:-}" ] && [ -f ../shared/data/timemachine.txt ]; then
  export RNNLAB_CORPUS=$(cd ../shared/data && pwd)/timemachine.txt
fi

echo "run.sh: starting RNN Lab on http://localhost:8501 (Ctrl+C stops it) ..."
exec "$PY" -m ui.serve "$@"   # streamlit run app.py, with the training workers started at once
