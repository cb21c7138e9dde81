#!/usr/bin/env bash
# Installs the Debian packages attnscope builds against (DESIGN.md, "Dependencies").
# Idempotent: asks apt-get only for what dpkg says is missing, so a second run is a no-op.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache clang-format pkg-config
  libgtest-dev libgmock-dev
  nlohmann-json3-dev libtomlplusplus-dev libcli11-dev libfmt-dev
  libimgui-dev libglfw3-dev libstb-dev libosmesa6-dev libgl-dev fonts-dejavu-core
  xvfb xdotool xauth
  slurm-wlm munge jq
  python3-dev pybind11-dev libdlpack-dev python3-numpy python3-pytest
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup-deps: installing ${missing[*]}"
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "setup-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo_cmd=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup-deps: all Debian packages present"
fi

# The CUDA toolkit is not a Debian package here; without it attnscope builds its CPU backend only.
if command -v nvcc >/dev/null || [[ -x /usr/local/cuda/bin/nvcc ]]; then
  echo "setup-deps: CUDA toolkit found ($( (command -v nvcc || echo /usr/local/cuda/bin/nvcc) ))"
else
  echo "setup-deps: no CUDA toolkit (nvcc) found: building the CPU backend only"
fi
