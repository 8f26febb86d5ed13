#!/usr/bin/env bash
# Serve a lecture hall: N supervised Streamlit workers behind nginx (see deploy/serve.py and docs/deploy.md).
#   deploy/serve.sh --workers 2 --port 8080 [--host 127.0.0.1] [--upstreams host:port,...]
# exec: the supervisor becomes this process, so Ctrl-C and TERM reach it and it stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-python}" deploy/serve.py "$@"
