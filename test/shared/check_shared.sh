#!/usr/bin/env bash
# ctest shared: libconvbwd.so loads into any process. It exports exactly the functions convbwd.h
# declares (runtime/convbwd.map), needs nothing at run time beyond libc, libm, libdl, libpthread
# and the loader (libstdc++, libgcc, the Halide runtime and the kernels are inside; the GPU runtimes
# are dlopen'ed), has no text relocations, and its C API answers through dlopen (python3 ctypes).
#   check_shared.sh <libconvbwd.so> <convbwd.h>
set -euo pipefail
so=$(realpath "$1") header=$2
fail() { echo "FAIL: $*"; exit 1; }
echo "library: $so ($(stat -c %s "$so") bytes)"

want=$(grep -oE '\bconvbwd_[a-z_]+\(' "$header" | tr -d '(' | sort -u)
have=$(nm -D --defined-only "$so" | awk '{print $3}' | sed 's/@.*//' | sort -u)
echo "exported: $(echo $have)"
[ "$want" = "$have" ] || fail "exports differ from convbwd.h: $(diff <(echo "$want") <(echo "$have") | grep '^[<>]' | tr '\n' ' ')"

needed=$(readelf -d "$so" | awk '/NEEDED/ {gsub(/[\[\]]/, "", $5); print $5}')
echo "needed: $(echo $needed)"
for n in $needed; do
  case "$n" in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|ld-linux-*.so.*) ;;
    *) fail "needs $n at run time" ;;
  esac
done
if ldd "$so" | grep -iE 'halide|llvm|stdc\+\+|libgcc_s|python'; then fail "ldd shows a library that must be inside"; fi
if readelf -d "$so" | grep -q TEXTREL; then fail "text relocations (an object not built position-independent)"; fi
# Undefined symbols: only the C library's (versioned GLIBC_*), and weak ones.
bad=$(nm -D --undefined-only "$so" | awk '$1 == "U" {print $2}' | grep -v '@GLIBC_' || true)
[ -z "$bad" ] || fail "undefined symbols outside glibc: $(echo $bad)"

# Through dlopen: the kernel count, the host ISA, and a bad problem's message naming the field.
/usr/bin/python3 - "$so" <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.convbwd_host_isa.restype = lib.convbwd_last_error.restype = ctypes.c_char_p
n = lib.convbwd_kernel_count()
assert n > 0, n
problem = (ctypes.c_int * 18)(1, 4, 8, 8, 4, 0, 0, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1)  # groups 3 of 4 channels
name = ctypes.c_char_p()
s = lib.convbwd_select_kernel(problem, 2, 0, 0, None, ctypes.byref(name))
msg = lib.convbwd_last_error().decode()
assert s == 1 and "problem.groups = 3" in msg, (s, msg)
print(f"dlopen: {n} kernels, host ISA {lib.convbwd_host_isa().decode()}, bad groups -> {msg!r}")
PY
echo "ok"
