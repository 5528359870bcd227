#!/usr/bin/env bash
# A class on one machine without Docker: two app processes behind HAProxy (deploy/haproxy.cfg: sticky sessions,
# the optional access code and HTTPS), sharing one run store, as deploy/compose.yaml runs them.
#   bash scripts/class.sh                 then open http://localhost:8080 (Ctrl+C stops all three)
# From the environment: PORT (the proxy's, 8080), APP_PORTS (the two app processes', "8501 8502"), HOST (where
# the proxy listens, every address), RNNLAB_RUNS_DIR (the shared run store), and haproxy.cfg's ACCESS_CODE, TLS_*.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python.sh
HAPROXY=$(command -v haproxy || echo /usr/sbin/haproxy)
[ -x "$HAPROXY" ] || { echo "class.sh: needs HAProxy (Debian: apt-get install haproxy)" >&2; exit 1; }
source scripts/install.sh class.sh
export RNNLAB_RUNS_DIR=${RNNLAB_RUNS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rnnlab/runs}
read -r APP1_PORT APP2_PORT <<< "${APP_PORTS:-8501 8502}"

pids=()
stop() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap stop EXIT
trap 'exit 130' INT TERM
for port in "$APP1_PORT" "$APP2_PORT"; do
  "$PY" -m ui.serve --server.port "$port" --server.address 127.0.0.1 &
  pids+=($!)
done
for port in "$APP1_PORT" "$APP2_PORT"; do    # both answer before the proxy sends anyone to them
  "$PY" - "$port" <<'PYEOF'
import sys, time, urllib.request
for _ in range(600):
    try:
        if urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/_stcore/health", timeout=2).read() == b"ok":
            sys.exit(0)
    except OSError:
        time.sleep(0.2)
sys.exit(f"class.sh: the app process on port {sys.argv[1]} did not start")
PYEOF
done
LISTEN="${HOST:-}:${PORT:-8080}" APP1="127.0.0.1:$APP1_PORT" APP2="127.0.0.1:$APP2_PORT" \
  "$HAPROXY" -db -f deploy/haproxy.cfg &
pids+=($!)
echo "class.sh: RNN Lab for a class on http://localhost:${PORT:-8080} (two app processes behind HAProxy, runs in" \
     "$RNNLAB_RUNS_DIR); Ctrl+C stops all three"
wait -n "${pids[@]}"
echo "class.sh: a process ended; stopping the others" >&2
exit 1
