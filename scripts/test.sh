#!/usr/bin/env bash
# Install everything the tests need, then run them all: bash scripts/test.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python.sh   # PY: this Python, or a .venv when the system Python refuses pip

# Debian's chromium for the real-browser tests (Playwright drives it; no browser download), its Chinese fonts for
# the Chinese pages' browser test and screenshots (fonts-noto-cjk), and HAProxy for the test of several app
# processes behind deploy/haproxy.cfg.
missing=""
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
[ -d /usr/share/fonts/opentype/noto ] && ls /usr/share/fonts/opentype/noto | grep -qi cjk || missing="$missing fonts-noto-cjk"
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || missing="$missing haproxy"
if [ -n "$missing" ]; then
  echo "test.sh: installing Debian's$missing ..."
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

# requirements-ray.txt is optional for the app, but CI runs the Ray backend's tests on a local Ray instance.
echo "test.sh: installing the test packages into $PY (the first time: a few minutes) ..."
"$PY" -m pip install -q --disable-pip-version-check --root-user-action=ignore -r requirements-test.txt -r requirements-ray.txt

# The Time Machine corpus: tests use a local copy when one is there (never the network).
if [ -z "${RNNLAB_CORPUS:-}" ] && [ -f ../shared/data/timemachine.txt ]; then
  export RNNLAB_CORPUS=$(cd ../shared/data && pwd)/timemachine.txt
fi

exec "$PY" -m pytest "$@"
