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
# And from libconvbwd.so (it runs with nothing of Halide, LLVM or the C++ runtime beside it).
"$venv/bin/cmake" -G Ninja -S "$here/apps/examples/c" -B "$build/example-c-shared" -DCMAKE_PREFIX_PATH="$build/install" \
    -DCONVBWD_EXAMPLE_SHARED=ON >/dev/null
"$venv/bin/cmake" --build "$build/example-c-shared" >/dev/null
"$build/example-c-shared/bwd_example_c"

# The Python package, installed: cmake --install put it in $build/install/lib/python (libconvbwd.so
# beside its modules); the PyTorch environment of scripts/setup.sh imports it from there (a .pth
# file). From outside the source tree, it must load the installed library and serve PyTorch.
if [ "${CONVBWD_TORCH:-1}" != 0 ]; then
  tvenv=${CONVBWD_TORCH_VENV:-$here/.venv-torch}
  site=$("$tvenv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$build/install/lib/python" >"$site/convbwd.pth"
  (cd / && env -u PYTHONPATH -u CONVBWD_LIBRARY "$tvenv/bin/python" - "$build/install" <<'PY'
import os, sys, torch
import convbwd, convbwd.torch
prefix = os.path.realpath(sys.argv[1])
lib = os.path.realpath(convbwd.library_path())
assert lib == os.path.join(prefix, "lib", "libconvbwd.so"), lib
with convbwd.torch.override():
    x = torch.randn(2, 3, 9, 9, requires_grad=True)
    w = torch.randn(4, 3, 3, 3, requires_grad=True)
    torch.nn.functional.conv2d(x, w, padding=1).sum().backward()
st = convbwd.torch.stats()
assert st["served"] == 1 and st["fallback"] == 0, st
print(f"installed Python package: {os.path.dirname(convbwd.__file__)} over {lib}: {st}")
PY
  )
fi
