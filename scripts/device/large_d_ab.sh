#!/usr/bin/env bash
# Large-D A/B of attnscope binaries in one device call (issue 21's regime): per round and binary, B 1 H 48
# S 8192 fp16 at the head dims of $AB_D, causal 0 and 1, the kernels of $AB_KERNELS after the baseline
# $AB_BASELINE (first, so that it is the ratios' denominator), --no-check --metrics none, 0.15 s of
# samples a case after a 300 ms cool-down. Rounds alternate the binaries' order (A B, then B A, ...) so
# that neither always runs first. Prints each run's table (results_table.py: TFLOPS, SM clock, ratio to
# the baseline) and keeps only each run's results.jsonl, as $OUT/<round>_<n>.jsonl (n: the binary's place
# on the command line), so that $OUT holds few files.
#   scripts/device/large_d_ab.sh BIN_A [BIN_B ...]      (each BIN holds attnscope)
# Environment: AB_D (default 704,768,1024), AB_KERNELS (ffpa.wgmma.acc_f16), AB_BASELINE (cublas.unfused),
# AB_ROUNDS (2), AB_SHAPE (the shape flags, default "--batch 1 --heads 48 --seq 8192 --dtype fp16").
set -uo pipefail
(($# >= 1)) || { sed -n 2,12p "$0"; exit 2; }
HERE=$(dirname "$0")
source "$HERE/common.sh" "$1"
read -ra shape <<< "${AB_SHAPE:---batch 1 --heads 48 --seq 8192 --dtype fp16}"
bins=("$@")
work=$(mktemp -d)
for ((round = 1; round <= ${AB_ROUNDS:-2}; ++round)); do
  order=($(seq 0 $((${#bins[@]} - 1))))
  ((round % 2 == 0)) && order=($(printf '%s\n' "${order[@]}" | tac))
  for n in "${order[@]}"; do
    label="${round}_$((n + 1))"
    timeout 300 "${bins[$n]}/attnscope" run --quiet --kernels "${AB_BASELINE:-cublas.unfused},${AB_KERNELS:-ffpa.wgmma.acc_f16}" \
      --baseline "${AB_BASELINE:-cublas.unfused}" "${shape[@]}" --head-dim "${AB_D:-704,768,1024}" --causal 0,1 \
      --no-check --metrics none --max-time-s 0.15 --cooldown-ms 300 --out "$work/$label" --force > "$work/$label.log" 2>&1
    echo "round $round, ${bins[$n]}: rc=$?"
    cp "$work/$label/results.jsonl" "$OUT/$label.jsonl" 2>/dev/null && python3 "$HERE/results_table.py" "$OUT/$label.jsonl"
  done
done
rm -rf "$work"
