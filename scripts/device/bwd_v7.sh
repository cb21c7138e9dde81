#!/usr/bin/env bash
# fa2.mma backward v7 (2-D warp tiles, P and dS through shared memory), one device call per half:
#   PART=small: backward conformance of fa2.mma (and the engine-stage tests), memcheck at D 64 and
#     224, new/old/new tokens16k at D 32, 64, 128 (S 2048/8192, causal 0/1, fp16, warm L2), and
#     PyTorch's FA2 backward at those D (anchors.py, its own timer) in the same call;
#   PART=wide: new/old/new at D 160, 192, 256 (H = 2048 / D rounded down), the new kernel at D 224
#     (the old one refused it), PyTorch's FA2 backward at those D, then ncu of ours and FA2's at
#     D NCU_D (128) S 8192; VARIANT=folder first times that binary against NEW at VARIANT_D (32).
#   PART=all: both in one call (no ncu; memcheck at MEMCHECK_D, default "64 224").
#   PART=small ANCHORS=dev-carry/z/anchors.py scripts/device/bwd_v7.sh dev-carry/new dev-carry/old
set -uo pipefail
NEW=${1:?new binary folder}
OLD=${2:?old binary folder}
HERE=$(dirname "$0")
source "$HERE/common.sh" "$NEW"
anchors() {
  ( unset LD_LIBRARY_PATH; timeout "${2:-150}" python3 "${ANCHORS:-../shared/tools/anchors.py}" --d "$1" \
    --pass bwd --impl flash --json "$OUT/anchors_$PART.json" > "$OUT/anchors_$PART.log" 2>&1; echo "anchors rc=$?" )
  grep -E "^flash" "$OUT/anchors_$PART.log" | head -40
}
memcheck() {
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 7 "$ATTNSCOPE_BIN" run --in-process \
    --kernels fa2.mma --batch 1 --heads 8 --heads-kv 2 --seq-q 100 --seq-kv 300 --head-dim "$1" \
    --causal 1 --pass bwd --metrics none --max-time-s 0.01 --out "$OUT/memcheck$1" --force > "$OUT/memcheck$1.log" 2>&1
  echo "memcheck d$1 rc=$?"; grep -E "ERROR SUMMARY" "$OUT/memcheck$1.log" | head -3
}
if [[ ${PART:-small} == all ]]; then
  # Everything of small and wide in one call (new/old/new at every D, D 224 too), the anchors last.
  run_conformance "${FILTER:-Registry/BackwardConformance.*fa2_mma:Fa2MmaSpec.*:Varlen*}" 200
  for d in ${MEMCHECK_D:-64 224}; do memcheck "$d"; rm -rf "$OUT/memcheck$d"; done
  AB_PASS=bwd AB_SEQ=2048,8192 AB_D=32,64,128 AB_EXTRA=--no-check "$HERE/fa2_ab.sh" "$NEW" "$OLD" | tail -13
  rm -f "$OUT"/ab_*
  BWD_D="160 192 224 256" "$HERE/bwd_wide_ab.sh" "$NEW" "$OLD" | paste - - - - - -
  anchors 32,64,128,160,192,224,256 240
elif [[ ${PART:-small} == probe ]]; then
  # The conformance matrix, VARIANT against NEW at D 32-128, ncu source-level stall samples of NEW at
  # D 64 and 256 and ncu beside FA2's at D 256; the conformance lines again at the end (the output's
  # tail is what comes back).
  run_conformance "${FILTER:-Registry/BackwardConformance.*fa2_mma:Fa2MmaSpec.*:Varlen*:EngineStages.*}" 260 \
    > "$OUT/conformance_summary.txt"
  [[ -n ${VARIANT:-} ]] && AB_PASS=bwd AB_SEQ=2048,8192 AB_D=${VARIANT_D:-32,64,128} AB_EXTRA=--no-check \
    "$HERE/fa2_ab.sh" "$VARIANT" "$NEW" > "$OUT/variant.txt" 2>&1
  for d in 64 256; do
    BWD_D=$d "$HERE/bwd_source.sh" "$NEW" > /dev/null 2>&1; mv "$OUT/bwd_source.csv.xz" "$OUT/bwd_source_d$d.csv.xz"
  done
  BWD_D=256 "$HERE/bwd_ncu.sh" "$NEW" > "$OUT/ncu_d256.txt" 2>&1
  tar -C "$OUT" -cJf "$OUT/probe.tar.xz" ncu_ours.txt ncu_fa2.txt conformance.log && rm -f "$OUT"/ncu_ours.txt "$OUT"/ncu_fa2.txt
  rm -rf "$OUT"/ncu_ours "$OUT/ncu_bwd.log"
  rm -f "$OUT"/ab_*
  tail -40 "$OUT/ncu_d256.txt"; cat "$OUT/variant.txt" | tail -16; cat "$OUT/conformance_summary.txt"
elif [[ ${PART:-small} == small ]]; then
  run_conformance "${FILTER:-Registry/BackwardConformance.*fa2_mma:Fa2MmaSpec.*:Varlen*:EngineStages.*}" 260
  memcheck 64
  memcheck 224
  AB_PASS=bwd AB_SEQ=2048,8192 AB_D=32,64,128 AB_EXTRA=--no-check "$HERE/fa2_ab.sh" "$NEW" "$OLD"
  anchors 32,64,128
else
  run_conformance "${FILTER:-Registry/BackwardConformance.*fa2_mma:Fa2MmaSpec.*}" 200
  [[ -n ${VARIANT:-} ]] && AB_PASS=bwd AB_SEQ=2048,8192 AB_D=${VARIANT_D:-32} AB_EXTRA=--no-check \
    "$HERE/fa2_ab.sh" "$VARIANT" "$NEW"
  BWD_D="160 192 256" "$HERE/bwd_wide_ab.sh" "$NEW" "$OLD"
  BWD_D="224" "$HERE/bwd_wide_ab.sh" "$NEW" "$NEW" | grep run1
  anchors 160,192,224,256
  [[ ${SKIP_NCU:-0} == 1 ]] || BWD_D=${NCU_D:-128} "$HERE/bwd_ncu.sh" "$NEW"
fi
