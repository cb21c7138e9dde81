#!/usr/bin/env bash
# Issue 25: CUPTI sessions kept open from case to case, against one session a case. OLD and NEW:
# binaries' folders (attnscope; NEW also tests/attnscope.tests.gpu); PROBE: cupti_concurrency.
# The probe first (fresh/keep, one GPU and two processes), then the metrics GPU tests on NEW, then
# the 60-case sweep with the default metrics on one GPU and on all, old/new alternated, traced, and
# the metrics of old against new case by case.
set -uo pipefail
OUT=${OUT:-/tmp/out}
HERE=$(dirname "$0")
[[ -n ${PROBE:-} ]] && SETS=${SETS:-"DEFAULT ONE"} REPLAYS=${REPLAYS:-kernel} SESSIONS="fresh keep" "$HERE/cupti_concurrency.sh"
if [[ -x $NEW/tests/attnscope.tests.gpu ]]; then
  ATTNSCOPE_BIN=$PWD/$NEW/attnscope ATTNSCOPE_PRESETS=$PWD/assets/presets \
    timeout 300 "$NEW/tests/attnscope.tests.gpu" --gtest_filter="${TESTS:-MetricsGpu.*}" > "$OUT/tests.log" 2>&1
  echo "== GPU tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) \]|Failure|Expected|Which is|actual" "$OUT/tests.log" | head -30
fi
for run in ${SWEEPS:-old:def1:--devices,0 new:def1:--devices,0 old:all:--devices,all new:all:--devices,all}; do
  which=${run%%:*}; rest=${run#*:}; name=${rest%%:*}
  bin=$OLD; [[ $which == new ]] && bin=$NEW
  BIN=$bin RUNS="$which-$name:${rest#*:}" "$HERE/metrics_trace.sh" 2>&1 | grep -vE "^  (fa2.mma|cudnn.sdpa|cublas.unfused) |metrics pass"
done
# COMPARE: OLD_RUN:NEW_RUN pairs of the runs above (their names as which-name).
for pair in ${COMPARE:-old-def1:new-def1 old-all:new-all}; do
  a=${pair%%:*}; b=${pair#*:}
  [[ -d $OUT/$a && -d $OUT/$b ]] && { echo "== metrics $a against $b"; python3 "$HERE/compare_metrics.py" "$OUT/$a" "$OUT/$b"; }
done
# One file comes back (the device tool returns a few): the logs and every run's results.jsonl.
for d in "$OUT"/*/; do rm -f "$d"/plan.jsonl "$d"/results.csv "$d"/workers.log; done
tar -C "$OUT" -czf /tmp/issue25.tgz . && rm -rf "${OUT:?}"/* && mv /tmp/issue25.tgz "$OUT/"
