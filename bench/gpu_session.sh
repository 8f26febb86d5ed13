#!/usr/bin/env bash
# One GPU lease in one call (issue 48): nvidia-smi, the GPU benchmark, three training runs side by side
# until a deadline this script computes from its own start, the CUDA tests while they train, and a
# checkpoint of each run under $OUT every 60 s (float16, 15 MB: the device returns files of at most 16 MB).
#
#   bash bench/gpu_session.sh BUDGET_SECONDS [RUNS_FILE]   # on the GPU machine, OUT set by the device tool
#   DEVICE=cpu QUICK=1 OUT=/tmp/out bash bench/gpu_session.sh 150    # tried here, end to end, on the CPU
#
# RUNS_FILE: one run a line, "name|corpus folder|train options|export options" (default bench/gpu_runs.txt,
# the first call's three runs); TESTS=0 leaves the CUDA tests out (a second call, after they passed).
#
# Prepared here first (docs/gpu-session.md): .whl/ (bench/gpu_wheels.sh) and .gpu/data.tar.gz (the mix
# the runs train on), both git-ignored and carried. The benchmark runs before the training, alone on the
# GPU, so that its numbers are the chip's; the CUDA tests check results, not speed, so they share the GPU
# with the training. What comes back: RUN.safetensors per run (exported as RUNS_FILE says at the end) and
# logs.tar.gz (nvidia-smi, the tests, the benchmark, docs/performance.md, each run's log and train_log.csv).
set -uo pipefail
BUDGET=${1:?budget in seconds}
RUNS_FILE=${2:-bench/gpu_runs.txt}
START=$(date +%s)
DEVICE=${DEVICE:-cuda}
OUT=${OUT:?OUT: where the files to bring back go}
RUNS_DIR=runs/gpu
LOGS=$RUNS_DIR/logs
mkdir -p "$OUT" "$LOGS"
export PYTHONUNBUFFERED=1
elapsed() { echo $(( $(date +%s) - START )); }
say() { echo "[$(elapsed) s] $*" | tee -a "$LOGS/session.txt"; }

# -- the wheels the image lacks, and the data -----------------------------------------------------------
if compgen -G ".whl/*.whl" >/dev/null && ! python3 -c "import streamlit, plotly, segno, redis" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site:${PYTHONPATH:-}
fi
for archive in .gpu/*.tar.gz; do [ -f "$archive" ] && tar xzf "$archive"; done
declare -A DATA TRAIN EXPORT
while IFS='|' read -r name data train export_options; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  DATA[$name]=$data TRAIN[$name]=$train EXPORT[$name]=$export_options
done < "$RUNS_FILE"
say "start: budget ${BUDGET} s, device ${DEVICE}, runs ${!TRAIN[*]} ($RUNS_FILE)"
if command -v nvidia-smi >/dev/null; then nvidia-smi > "$LOGS/nvidia-smi.txt" 2>&1; fi
python3 -c "import torch; print('torch', torch.__version__)" | tee -a "$LOGS/session.txt"

# -- the GPU benchmark, alone on the chip -----------------------------------------------------------------
QUICK_ARGS=() REPEATS=10
[ -n "${QUICK:-}" ] && QUICK_ARGS=(--quick --max-tokens 1024) REPEATS=3
timeout 150 python3 bench/gpu.py --device "$DEVICE" --write "${QUICK_ARGS[@]}" > "$LOGS/gpu_bench.txt" 2>&1
say "bench/gpu.py: exit $?"
cp docs/performance.md "$LOGS/"
timeout 60 python3 bench/gpu_capture.py --device "$DEVICE" --repeats "$REPEATS" > "$LOGS/gpu_capture.txt" 2>&1
say "bench/gpu_capture.py: exit $?"

# -- the runs side by side until the deadline (each stops sooner if its --epochs end first) --------------
FINAL_RESERVE=45                                      # the last export and the tar
STARTUP=25                                            # each trainer reads and encodes the corpus before its clock starts
minutes=$(python3 -c "print(max(0.0, ($BUDGET - $(elapsed) - $FINAL_RESERVE - $STARTUP) / 60))")
LOG_EVERY=50
[ -n "${QUICK:-}" ] && LOG_EVERY=2
say "training for $minutes minutes"
pids=()
for name in "${!TRAIN[@]}"; do
  settings=${TRAIN[$name]}
  [ -n "${QUICK:-}" ] && settings="${settings/--max-tokens [0-9]*/--max-tokens 1024}"
  [[ "$settings" == *--epochs* ]] || settings="--epochs 10000 $settings"
  # shellcheck disable=SC2086
  nohup python3 -m model.cli train --task translate --data "${DATA[$name]}" --out "$RUNS_DIR/$name" --device "$DEVICE" \
    --max-minutes "$minutes" --save-minutes 1 --log-every "$LOG_EVERY" --eval-every 500 --threads 1 \
    $settings > "$LOGS/$name.log" 2>&1 &
  pids+=($!)
done
watcher=
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=utilization.gpu,memory.used,clocks.sm --format=csv -l 15 > "$LOGS/gpu_use.csv" 2>&1 &
  watcher=$!
fi

# -- the CUDA tests, while the runs train -------------------------------------------------------------------
tests=
if [ "${TESTS:-1}" != 0 ]; then
  timeout 300 python3 -m pytest -q -p no:cacheprovider tests/test_cuda.py > "$LOGS/test_cuda.txt" 2>&1 &
  tests=$!
fi

# -- a checkpoint of each run under OUT every 60 s, until they stop -------------------------------------------
export_run() {  # export_run NAME [export options]: float16 weights of the run, to OUT/NAME.safetensors
  local name=$1; shift
  python3 -m model.cli export --run "$RUNS_DIR/$name" --out "$RUNS_DIR/export-$name" "$@" >> "$LOGS/export.txt" 2>&1 \
    && cp "$RUNS_DIR/export-$name/model.safetensors" "$OUT/$name.safetensors.tmp" \
    && mv "$OUT/$name.safetensors.tmp" "$OUT/$name.safetensors"
}
alive() { for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && return 0; done; return 1; }
next_copy=$(( $(elapsed) + 60 ))
while alive; do
  sleep 5
  if (( $(elapsed) >= next_copy )); then
    exporters=()
    for name in "${!TRAIN[@]}"; do
      if [ -d "$RUNS_DIR/$name/last" ]; then export_run "$name" --use-last & exporters+=($!); fi
    done
    (( ${#exporters[@]} )) && wait "${exporters[@]}"
    next_copy=$(( $(elapsed) + 60 ))
    say "checkpoints copied: $(ls "$OUT" | tr '\n' ' ')"
  fi
done
for pid in "${pids[@]}"; do wait "$pid"; say "trainer $pid: exit $?"; done
[ -n "$watcher" ] && kill "$watcher"
if [ -n "$tests" ]; then
  wait "$tests"
  say "tests/test_cuda.py: exit $? ($(tail -1 "$LOGS/test_cuda.txt"))"
fi

# -- the end: each run exported with its export options (e.g. its last five epochs averaged, as in the paper)
exporters=()
# shellcheck disable=SC2086
for name in "${!TRAIN[@]}"; do export_run "$name" ${EXPORT[$name]} & exporters+=($!); done
wait "${exporters[@]}"
for name in "${!TRAIN[@]}"; do
  cp "$RUNS_DIR/$name/train_log.csv" "$LOGS/$name-train_log.csv" 2>/dev/null
  cp "$RUNS_DIR/export-$name/config.json" "$LOGS/$name-config.json" 2>/dev/null
done
say "done: $(ls -l "$OUT" | tail -n +2 | awk '{print $5, $9}' | tr '\n' ';')"
tar czf "$OUT/logs.tar.gz" -C "$RUNS_DIR" logs
