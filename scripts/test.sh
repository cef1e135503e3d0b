#!/usr/bin/env bash
# Quick start, command 2: set up, build, and run the test suite (ctest).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$here/scripts/build.sh"
build=${BUILD_DIR:-$here/build}
cd "$build"
ctest --output-on-failure -j "$(nproc)"
