#!/usr/bin/env bash
# Fill .whl/ (repo root, git-ignored) with the wheels that the GPU machine's image
# lacks, so that `python3 -m pytest tests/test_cuda.py` can run there without network (Python 3.12.3,
# x86-64, torch 2.11 preinstalled). Run it HERE, where PyPI can be reached; it is idempotent.
#
# The image already has numpy, pandas, matplotlib, safetensors, tokenizers, sacrebleu, tqdm, pytest,
# pytest-timeout, jinja2, click, h11, attrs, narwhals, protobuf, pyarrow, pillow, requests, ... so only
# streamlit, plotly and what they need beyond that are carried. typing-extensions is carried on purpose:
# anyio 4.16 imports typing_extensions.sentinel (new in 4.16.0) and the image's version is unknown.
#
# A device call then names `.whl` in `carry` and starts its command with:
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit; python3 -m pytest tests/test_cuda.py
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .whl
shopt -s nullglob nocaseglob

PINS=(
  streamlit==1.67.0 plotly==7.1.0                        # ours (requirements.txt)
  altair==6.3.0 watchdog==7.1.0                          # streamlit (not pydeck, 11 MB: only st.pydeck_chart imports it)
  starlette==1.10.0 uvicorn==0.54.0 anyio==4.16.0        # streamlit's server side
  python-multipart==0.0.34 itsdangerous==2.2.0 websockets==17.4
  jsonschema==4.26.0 jsonschema-specifications==2025.9.1 # altair
  referencing==0.37.0 rpds-py==2026.9.1                  # jsonschema (rpds-py is binary)
  typing-extensions==4.16.0                              # anyio>=4.16 needs typing_extensions>=4.16.0
  segno==1.6.6 redis==8.1.0                              # ours: the class page's QR code, the class store's client
)
PLATFORMS=(manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64)
MORE_PLATFORMS=(manylinux_2_24_x86_64 manylinux_2_31_x86_64 manylinux_2_34_x86_64 manylinux_2_35_x86_64)

download() {  # download PIN with the platform tags given after it
  local pin=$1; shift
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    "${@/#/--platform=}" -d .whl "$pin"
}

for pin in "${PINS[@]}"; do
  name=${pin%%==*} version=${pin##*==}
  stem=$(tr -- '-.' '__' <<<"$name")                 # wheel file names use '_' for '-' and '.'
  have=(.whl/"$stem"-"$version"-*.whl)
  if (( ${#have[@]} )); then echo "have  $pin"; continue; fi
  rm -f .whl/"$stem"-*.whl                          # another version of it: keep exactly one
  echo "fetch $pin"
  download "$pin" "${PLATFORMS[@]}" 2>/dev/null || download "$pin" "${PLATFORMS[@]}" "${MORE_PLATFORMS[@]}"
done

ls -1 .whl
bytes=$(cat .whl/*.whl | wc -c)
echo "total: $(( bytes / 1024 )) KiB in $(ls .whl/*.whl | wc -l) wheels"
# a call carries at most 64 MiB: the tracked tree (~25 MiB), data/en-es (~8 MiB) and these wheels
if (( bytes > 30 * 1024 * 1024 )); then echo "WARNING: .whl/ is over 30 MiB; with the tree and data/en-es a call may pass its 64 MiB" >&2; fi
