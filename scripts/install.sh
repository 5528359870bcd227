# Sourced by run.sh and class.sh, after python.sh: install the app's packages into $PY, saying what and how long.
# $1: the script's name, for its messages.
packages=$(grep -Eo '^[A-Za-z0-9_.-]+==[^ #]+' requirements.txt | tr '\n' ' ')
echo "$1: installing RNN Lab's packages into $PY: $packages"
echo "$1: the first time this downloads about 2 GB (PyTorch is most of it) and takes a few minutes; later, seconds."
started=$SECONDS
"$PY" -m pip install -q --disable-pip-version-check --root-user-action=ignore -r requirements.txt
echo "$1: packages ready after $((SECONDS - started)) s."

# The Time Machine corpus: RNNLAB_CORPUS when set, else a copy beside the clone (as the tests use), else the
# app's cache or a download on first use. Runs are kept in RNNLAB_RUNS_DIR (default: the cache's runs/).
if [ -z "${RNNLAB_CORPUS:-}" ] && [ -f ../shared/data/timemachine.txt ]; then
  export RNNLAB_CORPUS=$(cd ../shared/data && pwd)/timemachine.txt
fi
