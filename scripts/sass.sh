#!/usr/bin/env bash
# `make sass KERNEL=<kernel id or family>`: the SASS of every CUDA object of a kernel family, as
# cuobjdump -sass prints it, with demangled names. KERNEL is a registry id (fa2.mma,
# ffpa.wgmma.acc_f32), an id prefix (ffpa.l1) or a family folder under kernels/ (fa2, ffpa/wgmma).
# The family of an id is the folder of the source that registers it. Needs a CUDA build in $1.
set -euo pipefail
BUILD=${1:-build}
KERNEL=${2:-}
if [[ -z $KERNEL ]]; then
  echo "make sass: KERNEL is required, e.g. make sass KERNEL=fa2.mma (an id, an id prefix or a folder under kernels/)" >&2
  exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CUOBJDUMP=$(command -v cuobjdump || true)
[[ -z $CUOBJDUMP && -x /usr/local/cuda/bin/cuobjdump ]] && CUOBJDUMP=/usr/local/cuda/bin/cuobjdump
if [[ -z $CUOBJDUMP ]]; then
  echo "make sass: cuobjdump not found (it ships in the CUDA toolkit's bin/; add it to PATH)" >&2
  exit 2
fi
FILT=$(command -v cu++filt || echo cat)

if [[ -d $ROOT/kernels/$KERNEL && $KERNEL != api && $KERNEL != common ]]; then
  family=$KERNEL
else
  # The source that registers the id (its spec's `id = ... "<id>"`), or for a prefix an id under it.
  re=${KERNEL//./\\.}
  src=$(grep -rlE "id = .*\"$re\"" "$ROOT/kernels" --include=*.cu --include=*.cpp | head -1 || true)
  [[ -z $src ]] && src=$(grep -rlE "id = .*\"$re\\." "$ROOT/kernels" --include=*.cu --include=*.cpp | head -1 || true)
  if [[ -z $src ]]; then
    echo "make sass: KERNEL '$KERNEL' is neither a registered kernel id nor a family folder under kernels/;" \
         "see 'attnscope kernels'" >&2
    exit 2
  fi
  family=$(dirname "${src#"$ROOT/kernels/"}")
fi

mapfile -t objects < <(find "$BUILD/kernels/CMakeFiles" -path "*.dir/$family/*" -name '*.cu.o' 2>/dev/null | sort)
if [[ ${#objects[@]} -eq 0 ]]; then
  echo "make sass: no CUDA objects for kernels/$family under $BUILD (build it first: cmake --build $BUILD)" >&2
  exit 2
fi
echo "# SASS of kernels/$family (${#objects[@]} objects) for '$KERNEL'"
for obj in "${objects[@]}"; do
  echo "## ${obj#"$BUILD/"}"
  "$CUOBJDUMP" -sass "$obj" | $FILT
done
