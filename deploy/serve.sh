#!/usr/bin/env bash
# Serve a lecture hall: N supervised Streamlit workers behind nginx (see deploy/serve.py and docs/deploy.md).
#   [PYTHON=/path/to/venv/bin/python] deploy/serve.sh --workers 2 --port 8080 [--host 127.0.0.1]
#       [--upstreams host:port,...] [--public-url http://HOST:8080/]
# $PYTHON (default: `python` on the PATH) runs the supervisor, and the supervisor runs every worker with it.
# exec: the supervisor becomes this process, so Ctrl-C and TERM reach it and it stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-python}" deploy/serve.py "$@"
