#!/bin/bash
# convbwd-tune end to end on the host target (ctest entry `autotune`): a tiny seeded search on one
# class verifies every candidate and writes a tuning database with a module that the driver then
# runs; a run killed mid-way and resumed runs nothing twice and loses nothing; a deliberately
# wrong candidate (test hook) is recorded wrong and never promoted; 2 shards merged equal 1 run;
# a machine without the generator records nothing for candidates it cannot build; the Adams2019
# baselines of a backward-data and a backward-weight class build and verify; the warm start runs
# the library's own kernels of the class first.
# usage: run.sh <build dir> <source dir>
set -euo pipefail
B=$1 S=$2
T=$(mktemp -d /tmp/convbwd_autotune.XXXXXX)
trap 'rm -rf "$T"' EXIT
TUNE="$B/autotune/convbwd-tune" DRIVER="$B/apps/convbwd-driver" CHECK="python3 $S/test/autotune/check.py"
SHAPES=$S/test/autotune/tiny.txt
# Steps 1-5 search from random points (--seeds none): they test building, the hooks, resuming and
# shards, which need candidates that are not built in; step 8 tests the warm start.
COMMON=(--shapes "$SHAPES" --target host --budget 6 --iters 3 --jobs 2 --seeds none)

echo "== 1. a seeded search (budget 6, refinement on), one candidate wrong on purpose"
"$TUNE" "${COMMON[@]}" --seed 7 --results "$T/a" --promote-always --test-wrong-candidate 1
$CHECK complete "$T/a" 6 2
$CHECK wrong "$T/a" "$T/a/tuning.db"
grep -q '^module tuning.db.kernels.so$' "$T/a/tuning.db"
[ -s "$T/a/search.png" ] || { echo "no chart of the search ($T/a/search.png)"; exit 1; }
KERNEL=$(grep '^bwd_weight' "$T/a/tuning.db" | head -1 | awk '{print $2}')
echo "-- the driver uses the database at once (record's kernel $KERNEL)"
CONVBWD_VERBOSE=dispatch "$DRIVER" conv --tuning-db "$T/a/tuning.db" -n 2 -c 16 -H 10 -W 10 -k 16 -y 3 -x 3 \
    -p 1 -q 1 -F 4 -I NHWC > "$T/driver.out" 2>&1 || { cat "$T/driver.out"; exit 1; }
grep -q "tuning db $T/a/tuning.db:[0-9]* -> $KERNEL" "$T/driver.out" || { cat "$T/driver.out"; exit 1; }
grep -q "kernel $KERNEL  verify ok" "$T/driver.out" || { cat "$T/driver.out"; exit 1; }

echo "== 2. random sampling only, in one run"
"$TUNE" "${COMMON[@]}" --seed 11 --refine 0 --results "$T/one"
$CHECK complete "$T/one" 6 2

echo "== 3. the same run killed after 9 rows, then resumed"
rc=0
"$TUNE" "${COMMON[@]}" --seed 11 --refine 0 --results "$T/killed" --stop-after 9 || rc=$?
[ "$rc" = 3 ] || { echo "expected the hook's exit status 3, got $rc"; exit 1; }
"$TUNE" "${COMMON[@]}" --seed 11 --refine 0 --results "$T/killed" --resume
$CHECK complete "$T/killed" 6 2
$CHECK same "$T/killed" "$T/one"

echo "== 4. two shards, merged"
for i in 0 1; do "$TUNE" "${COMMON[@]}" --seed 11 --refine 0 --results "$T/shards" --resume --shard $i/2; done
mkdir -p "$T/merged"
"$TUNE" --merge "$T/merged/results.jsonl" "$T/shards"
$CHECK same "$T/merged" "$T/one"
echo "== 5. no generator here (a GPU machine runs modules built elsewhere): candidates it has no module"
echo "   for leave no row, so that a build and a --resume run later take them"
CONVBWD_TUNE_GENERATOR_DIR="$T/no-generator" "$TUNE" "${COMMON[@]}" --seed 11 --refine 0 --results "$T/nogen" \
    > "$T/nogen.out" 2>&1 || { cat "$T/nogen.out"; exit 1; }
if grep -qE '"kind": "build"|"status": "compile_failed"' "$T/nogen/results.jsonl"; then  # the library's own run
    echo "a candidate that could not be built here was recorded"; exit 1
fi
"$TUNE" "${COMMON[@]}" --seed 11 --refine 0 --results "$T/nogen" --resume
$CHECK complete "$T/nogen" 6 2
$CHECK same "$T/nogen" "$T/one"
echo "== 6. --baseline adams2019: Halide's autoscheduler schedules a backward-data class's Funcs, which"
echo "   build, verify and run on both problems (the generator sets the estimates after the Funcs exist)"
"$TUNE" --shapes "$SHAPES" --direction bwd_data --target host --budget 1 --refine 0 --iters 1 --jobs 2 --seed 3 \
    --baseline adams2019 --results "$T/base" > "$T/base.out" 2>&1 || { cat "$T/base.out"; exit 1; }
$CHECK baseline "$T/base" 2 || { cat "$T/base.out"; exit 1; }
echo "== 7. the same for a backward-weight class (its workspace's split count is the problem's, 1 here)"
"$TUNE" --shapes "$SHAPES" --direction bwd_weight --target host --budget 1 --refine 0 --iters 1 --jobs 2 --seed 3 \
    --baseline adams2019 --results "$T/basew" > "$T/basew.out" 2>&1 || { cat "$T/basew.out"; exit 1; }
$CHECK baseline "$T/basew" 2 || { cat "$T/basew.out"; exit 1; }
echo "== 8. the warm start (--seeds library): the class's own kernels of the library come first, run as"
echo "   built (no module, no build row), each verified on the edge problem and both problems"
"$TUNE" --shapes "$SHAPES" --target host --budget 3 --refine 0 --iters 1 --jobs 2 --seed 5 --results "$T/seeds" \
    > "$T/seeds.out" 2>&1 || { cat "$T/seeds.out"; exit 1; }
$CHECK complete "$T/seeds" 3 2
$CHECK seeded "$T/seeds" "$("$DRIVER" --list-kernels)" 3
echo "autotune: all checks passed"
