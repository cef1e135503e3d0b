#!/usr/bin/env bash
# Quick start, command 2: set up, build, and run the test suite (ctest).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$here/scripts/build.sh"
build=${BUILD_DIR:-$here/build}
cd "$build"
ctest --output-on-failure -j "$(nproc)"

# Install, then build and run the example against the installed CMake package.
venv=${CONVBWD_VENV:-$here/.venv}
"$venv/bin/cmake" --install "$build" --prefix "$build/install" >/dev/null
"$venv/bin/cmake" -G Ninja -S "$here/apps/examples" -B "$build/example" -DCMAKE_PREFIX_PATH="$build/install" >/dev/null
"$venv/bin/cmake" --build "$build/example" >/dev/null
"$build/example/bwd_example"
# The same package from a C-only project (the README's usage is C).
"$venv/bin/cmake" -G Ninja -S "$here/apps/examples/c" -B "$build/example-c" -DCMAKE_PREFIX_PATH="$build/install" >/dev/null
"$venv/bin/cmake" --build "$build/example-c" >/dev/null
"$build/example-c/bwd_example_c"
