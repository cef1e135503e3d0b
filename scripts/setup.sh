#!/usr/bin/env bash
# Installs every dependency of convbwd, pinned, on Debian 12 (run as root).
# Re-running it is fast and changes nothing once everything is present.
#   CONVBWD_VENV   where the Python environment with Halide, CMake and Ninja lives
#                  (default: <repo>/.venv)
#   CONVBWD_GPU=0  skip the AMD/OpenCL toolchain packages (host-only machines)
#   CONVBWD_TORCH=0  skip Debian's PyTorch (CPU) and torchvision and the PyTorch environment
#                  (ctest entry torch then reports itself skipped)
#   CONVBWD_TORCH_VENV  the PyTorch environment (default: <repo>/.venv-torch): a virtual environment
#                  over /usr/bin/python3 that sees Debian's torch, torchvision and numpy (system
#                  site packages); scripts/test.sh installs the Python package convbwd into it
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${CONVBWD_VENV:-$here/.venv}

# Debian packages, pinned to the versions Debian 12 (bookworm) ships.
debs=(
  build-essential
  python3-venv
  ccache
  doctest-dev=2.4.9~ds-1
  libdnnl-dev=2.6.3-1
)
if [ "${CONVBWD_GPU:-1}" != 0 ]; then
  debs+=(
    ocl-icd-opencl-dev=2.3.1-1
    pocl-opencl-icd=3.1-3+deb12u1
    clang-15=1:15.0.6-4+b1
    lld-15=1:15.0.6-4+b1
    llvm-15=1:15.0.6-4+b1
    rocm-device-libs=5.2.3-2
    libamdhip64-dev=5.2.3-8
  )
fi
# PyTorch for the Python package (python/convbwd): its tests (ctest torch) and the training
# example run on Debian's CPU build in the PyTorch environment below.
if [ "${CONVBWD_TORCH:-1}" != 0 ]; then
  debs+=(
    python3-torch=1.13.1+dfsg-4
    python3-torchvision=0.14.1-2
  )
fi
missing=()
for d in "${debs[@]}"; do
  name=${d%%=*}
  want=${d#*=}
  have=$(dpkg-query -W -f='${Status} ${Version}' "$name" 2>/dev/null || true)
  case "$have" in
    "install ok installed "*)
      [ "$name" = "$want" ] || [ "${have##* }" = "$want" ] || missing+=("$d") ;;
    *) missing+=("$d") ;;
  esac
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # A Debian point release can replace a pinned version; then take the archive's version and
  # say so, rather than fail the whole set-up.
  wanted=()
  for d in "${missing[@]}"; do
    name=${d%%=*}
    if [ "$name" != "$d" ] && ! apt-cache madison "$name" | awk -F'|' '{gsub(/ /,"",$2); print $2}' | grep -qxF "${d#*=}"; then
      echo "setup: warning: $d is no longer in the archive; installing $name $(apt-cache policy "$name" | awk '/Candidate/ {print $2}')"
      wanted+=("$name")
    else
      wanted+=("$d")
    fi
  done
  echo "setup: installing ${wanted[*]}"
  apt-get install -y -qq --no-install-recommends "${wanted[@]}" >/dev/null
fi

# Python environment: Halide (C++ SDK + CMake package inside the wheel), CMake, Ninja.
pins=(halide==21.0.0 cmake==3.31.6 ninja==1.13.0 numpy==2.1.3 matplotlib==3.9.2)
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv "$venv"
fi
stamp="$venv/.convbwd-pins"
if [ "$(cat "$stamp" 2>/dev/null)" != "${pins[*]}" ]; then
  echo "setup: installing ${pins[*]} into $venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${pins[@]}"
  echo "${pins[*]}" >"$stamp"
fi

# The PyTorch environment. Not $venv: Debian's torch 1.13 is built against Debian's numpy 1.24 and
# loses its numpy bridge under the numpy 2.1.3 pinned there ("Numpy is not available").
if [ "${CONVBWD_TORCH:-1}" != 0 ]; then
  tvenv=${CONVBWD_TORCH_VENV:-$here/.venv-torch}
  if ! grep -qsx 'include-system-site-packages = true' "$tvenv/pyvenv.cfg"; then
    echo "setup: creating the PyTorch environment $tvenv"
    rm -rf "$tvenv"
    /usr/bin/python3 -m venv --system-site-packages "$tvenv"
  fi
  "$tvenv/bin/python" -c 'import torch, torchvision, numpy' ||
    { echo "setup: PyTorch is not importable in $tvenv"; exit 1; }
  echo "setup: ok ($venv; PyTorch environment $tvenv)"
else
  echo "setup: ok ($venv)"
fi
