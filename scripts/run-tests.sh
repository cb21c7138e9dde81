#!/usr/bin/env bash
# `make test`: every CTest test of the build in $1 (jobs: $2). Where no CUDA device is usable the
# GPU tests (label gpu) would each print a "Skipped" line, hundreds in all: they are left out of the
# run and summarised in one line with the reason instead. Run alone (ctest -R <name> -V, or the
# binary with --gtest_filter), a GPU test still skips with its own printed reason.
set -uo pipefail
BUILD=${1:-build}
JOBS=${2:-$(nproc)}
cd "$BUILD" || exit 2

why=""
if [[ ! -x tests/attnscope.tests.gpu ]]; then
  why="the GPU tests are not built (ATTNSCOPE_ENABLE_CUDA=OFF: no CUDA toolkit at configure time)"
elif devices=$(./attnscope devices 2>&1) && grep -q "^no GPU:" <<<"$devices"; then
  why=$(grep -m1 "^no GPU:" <<<"$devices")
fi

if [[ -z $why ]]; then
  exec ctest --output-on-failure -j "$JOBS"
fi
gpu_tests=$(ctest -N -L gpu | sed -n 's/^Total Tests: //p')
ctest --output-on-failure -j "$JOBS" -LE gpu
rc=$?
echo "gpu: ${gpu_tests:-0} GPU tests skipped: ${why} (run them on a GPU machine; docs/VALIDATION.md)"
exit $rc
