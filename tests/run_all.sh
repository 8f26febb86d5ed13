#!/usr/bin/env bash
# The README's test command: system packages (Chromium for the browser tests, nginx and redis-server for the deploy test,
# the SWORD Bible modules for the corpus test, WordNet and Apertium for the everyday corpus), Python requirements, then the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v chromium >/dev/null || need+=(chromium)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx)                 # tests/test_deploy.py
command -v redis-server >/dev/null || need+=(redis-server)      # the class store: test_class_store.py, test_deploy.py
[ -d /usr/share/sword/modules/texts/ztext/engWEB2015eb ] || need+=(sword-text-web)
[ -d /usr/share/sword/modules/texts/ztext/spaRV1909eb ] || need+=(sword-text-sparv)
[ -f /usr/share/wordnet/data.noun ] || need+=(wordnet-base)                          # the everyday corpus
command -v apertium >/dev/null || need+=(apertium-en-es)
[ -f /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ] || need+=(fonts-wqy-microhei)  # 中文 static figures
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
fi
python -m pip install -q -r requirements.txt
python -m pytest "$@"
