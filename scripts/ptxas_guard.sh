#!/usr/bin/env bash
# CUDA compiler launcher for the warpgroup-MMA kernel families (kernels/CMakeLists.txt,
# attnscope_wgmma_guard): runs the compile, whose ptxas runs with -v, passes its messages on without
# ptxas's per-kernel resource lines, and fails the compile when ptxas says it serialised a kernel's
# wgmmas or injected a wait for them (infos C7510-C7599 naming wgmma / GMMA). ptxas reports those
# only as infos, and one of them cost fa3.wgmma 20-25% unnoticed (docs/PERF.md, 2026-11-28).
# Usage (as a launcher): ptxas_guard.sh [ccache] nvcc ARGS...
set -uo pipefail
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" 2> "$log"
rc=$?
grep -vE "^ptxas info +: (Compiling entry function|Function properties for|Used [0-9]+ registers|Compile time|[0-9]+ bytes gmem|Overriding)|^ +[0-9]+ bytes stack frame" "$log" | grep -vE "\(C75[0-9][0-9]\)" >&2
if grep -E "\(C75[0-9][0-9]\).*(wgmma|GMMA)" "$log" > /dev/null; then
  echo "ptxas_guard: ptxas serialised warpgroup MMAs (fix the kernel, docs/PERF.md \"item overlap\"):" >&2
  grep -E "\(C75[0-9][0-9]\)" "$log" >&2
  for a in "$@"; do [[ ${prev:-} == -o ]] && rm -f "$a"; prev=$a; done  # no object for the next link
  exit 1
fi
exit $rc
