# Sourced by run.sh and test.sh: sets PY to the Python to install into and run with.
# A Debian or Ubuntu system Python refuses pip installs ("externally-managed-environment"); then the scripts
# make and use a virtual environment in .venv (python3-venv must be installed: apt-get install python3-venv).
PY=${PYTHON:-python3}
if [ -z "${VIRTUAL_ENV:-}" ] && "$PY" - <<'PYEOF'
import os, sys, sysconfig
sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_paths()["stdlib"], "EXTERNALLY-MANAGED")) else 1)
PYEOF
then
  if [ ! -x .venv/bin/python ]; then
    echo "This Python is managed by the system: making a virtual environment in .venv ..."
    "$PY" -m venv .venv
  fi
  PY=.venv/bin/python
fi
