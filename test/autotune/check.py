"""Checks of convbwd-tune's results databases (test/autotune/run.sh)."""
import glob
import json
import sys


def rows(d):
    out = []
    for f in sorted(glob.glob(d + "/*.jsonl")):
        for line in open(f):
            line = line.strip()
            if line:
                out.append(json.loads(line))
    return out


def key(r):
    return (r["kind"], r.get("candidate", ""), r.get("problem_key", ""))


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    what, d = sys.argv[1], sys.argv[2]
    rs = rows(d)
    keys = [key(r) for r in rs]
    if len(keys) != len(set(keys)):
        dup = [k for k in set(keys) if keys.count(k) > 1]
        fail(f"{d}: a unit of work ran twice: {dup[:3]}")
    runs = [r for r in rs if r["kind"] == "run"]
    cands = sorted({r["candidate"] for r in runs})
    if what == "complete":  # every candidate verified on the edge problem and every suite problem
        budget, problems = int(sys.argv[3]), int(sys.argv[4])
        if len(cands) != budget:
            fail(f"{len(cands)} candidates, expected {budget}")
        for c in cands:
            mine = [r for r in runs if r["candidate"] == c]
            if len(mine) != problems + 1 or sum(r["edge"] == "1" for r in mine) != 1:
                fail(f"{c}: {len(mine)} rows, expected the edge problem + {problems}")
            for r in mine:
                if r["status"] not in ("ok", "wrong", "cannot_implement", "compile_failed"):
                    fail(f"{c}: status {r['status']}: {r.get('error')}")
                if r["status"] == "ok" and r["edge"] == "0" and not r.get("time_ms"):
                    fail(f"{c}: verified but not timed")
        defaults = [r for r in rs if r["kind"] == "default"]
        if len(defaults) != problems or any(r["status"] != "ok" or not r.get("peer_ms") for r in defaults):
            fail("the library's default and the peer were not measured on every problem")
        print(f"ok: {len(cands)} candidates x {problems + 1} problems, {len(rs)} rows, no unit twice")
    elif what == "wrong":  # the hooked candidate is recorded wrong and never promoted
        db = open(sys.argv[3]).read()
        wrong = {r["kernel"] for r in runs if r["status"] == "wrong"}
        if not wrong:
            fail("no candidate was recorded wrong")
        for k in wrong:
            if k in db:
                fail(f"wrong kernel {k} was promoted")
        print(f"ok: wrong {sorted(wrong)}, not promoted")
    elif what == "same":  # two results sets hold the same units with the same statuses
        other = rows(sys.argv[3])
        a = {key(r): r.get("status") for r in rs if r["kind"] != "build"}
        b = {key(r): r.get("status") for r in other if r["kind"] != "build"}
        if a != b:
            fail(f"{d} and {sys.argv[3]} differ: {sorted(set(a.items()) ^ set(b.items()))[:4]}")
        print(f"ok: {len(a)} units, same statuses")
    elif what == "baseline":  # the autoscheduler baseline verified and timed on N problems
        problems = int(sys.argv[3])
        ok = [r for r in rs if r["kind"] == "baseline" and r.get("status") == "ok"]
        if len(ok) != problems:
            fail(f"{len(ok)} verified baseline rows, expected {problems}: "
                 f"{[(r['kind'], r.get('status'), r.get('error', '')[:200]) for r in rs if r['kind'] in ('baseline', 'build')]}")
        print(f"ok: the baseline verified on {problems} problems")
    elif what == "seeded":  # the first N candidates are kernels of the library (no build row)
        listed, n = sys.argv[3], int(sys.argv[4])
        first = sorted({(int(r["index"]), r["candidate"].split()[0]) for r in runs})[:n]
        built = {r["kernel"] for r in rs if r["kind"] == "build"}
        if len(first) != n:
            fail(f"{len(first)} candidates, expected {n}")
        for _, k in first:
            if k not in listed:
                fail(f"candidate {k} is not a kernel of the library (--list-kernels)")
            if k in built:
                fail(f"candidate {k} was built, though the library has it")
        print(f"ok: the first {n} candidates are the library's: {[k for _, k in first]}")
    else:
        fail("unknown check " + what)


main()
