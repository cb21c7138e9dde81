#!/usr/bin/env bash
# fa2.mma varlen A/B/A in one device call: binaries $1 (new) and $2 (old), run new, old, new on
# training-size varlen batches (VAB_BATCH sequences, default 16,64; lognormal and uniform lengths up
# to 4096), D 64 and 128, causal 0 and 1, fp16, --metrics none; prints TFLOPS per case and run.
# VAB_PASS=bwd times the backward instead (warm L2). The A/B loop is scripts/device/fa2_ab.sh's.
set -uo pipefail
AB_VARLEN=${AB_VARLEN:-'lognormal:1024:0.8@1;uniform:64@2;lognormal:512:1.0@3'} AB_PASS=${VAB_PASS:-fwd} \
  AB_BATCH=${VAB_BATCH:-16,64} exec bash "$(dirname "$0")/fa2_ab.sh" "$@"
