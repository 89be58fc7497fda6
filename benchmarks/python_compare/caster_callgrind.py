# SPDX-License-Identifier: Apache-2.0
"""Instructions per call of each binding-caster row (bench.py --suite bindings), counted by
callgrind, with the source files where a caster's extra instructions go.

Usage: PYTHONPATH=<run.sh's build>/cmake/modules python caster_callgrind.py [--calls N] [--top K]

Runs itself under `valgrind --tool=callgrind`. Each statement of the suite (the caster, its
reference, the empty call of the same library) runs in a phase of its own, N calls in a
Python loop; callgrind dumps its counters at bench_dlpackpp's icount_mark between phases.
A row's figure is its phase's instructions per call net of the empty call's phase: what the
timed table calls "net of the floor", counted exactly (the interpreter's call machinery and
the loop cancel out). For each row the source files whose instructions differ most between
the caster's phase and the reference's are listed with the difference per call (run.sh's
modules carry line tables, so inlined code counts for its header): where the caster's extra
instructions go. Needs valgrind, callgrind_annotate, NumPy, the
bench modules; PyTorch 2.x rows where the venv has it.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import callgrind_tools

WARM = 200


def statement(text):
    """bench.py's "P.view_numel(a)" as ("P.view_numel", "a"); "P.make(8)" as ("P.make", 8)."""
    m = re.match(r"([PBN]\.\w+)\((\w+)\)$", text)
    if m is None:
        raise SystemExit("caster_callgrind: cannot read bench.py's statement %r" % text)
    return m.group(1), int(m.group(2)) if m.group(2).isdigit() else m.group(2)


def arguments():
    """bench.py's arguments of the bindings suite, and 8 for make(8)."""
    import bench
    args = bench.bindings_arguments()
    args[8] = 8
    return args


def rows():
    """bench.py's bindings rows, so that both tables list the same cases: (section, what,
    caster, reference, argument, caster's floor, reference's floor)."""
    import bench
    table = bench.BINDINGS + (bench.BINDINGS_TORCH if "t" in arguments() else [])
    out = []
    for section, what, caster, reference, caster_floor, reference_floor in table:
        if reference is not None:
            (c, arg), (r, _) = statement(caster), statement(reference)
            out.append((section, what, c, r, arg, caster_floor, reference_floor))
    return out


def phases():
    """(statement, argument) in the order they run: each row's two sides and each module's
    empty call, once each."""
    out = [("%s.noop" % m, "a") for m in "PBN"]
    for _, _, caster, reference, arg, _, _ in rows():
        for s in (caster, reference):
            if (s, arg) not in out:
                out.append((s, arg))
    return out


def drive(calls):
    import bench_dlpackpp as D
    import bench_nanobind as N
    import bench_nb_casters as B
    import bench_pybind11 as P
    modules = {"P": P, "B": B, "N": N}
    args = arguments()
    calls_of = [(getattr(modules[s[0]], s[2:]), args[a]) for s, a in phases()]
    for f, arg in calls_of:
        for _ in range(WARM):
            f(arg)
    for f, arg in calls_of:
        D.icount_mark()
        for _ in range(calls):
            f(arg)


def by_source(dump, calls):
    """{source file: exclusive instructions per call} of one dump. The modules are built with
    -g, so an inlined header's instructions count for that header (arguments.hpp,
    view_storage.hpp, pybind11.h...); a library without line tables counts as `??? <lib>`."""
    report = subprocess.run(["callgrind_annotate", "--threshold=100", "--inclusive=no", "--auto=no", dump],
                            check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout
    out = {}
    for line in report.splitlines():
        m = re.match(r"\s*([\d,]+) \(\s*([\d.]+)%\)\s+(\S[^:]*):(.*)$", line)
        if not m or m.group(2) == "100.0":  # the interpreter's entry frames, not instructions
            continue
        source = m.group(3).rsplit("/", 1)[-1]
        if source == "???":
            lib = re.search(r"\[([^\]]*)\]\s*$", m.group(4))
            source = "??? " + (lib.group(1).rsplit("/", 1)[-1] if lib else "")
        out[source] = out.get(source, 0.0) + int(m.group(1).replace(",", "")) / calls
    return out


def total(dump):
    with open(dump, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("totals:") or line.startswith("summary:"):
                return int(line.split()[1])
    raise SystemExit("caster_callgrind: no totals in %s" % dump)


def measure(calls):
    """{(statement, argument): (instructions per call, {source file: exclusive per call})}."""
    order = phases()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
                        callgrind_tools.dump_before("icount_mark"),
                        sys.executable, os.path.abspath(__file__), "--driver", "--calls", str(calls)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # out.1: everything before the first mark; out.(k+1): phase k-1, dumped at the next
        # mark (the driver marks once more after the last); what follows is dumped at exit.
        dumps = [out + ".%d" % (i + 2) for i in range(len(order))]
        if not all(os.path.exists(p) for p in dumps):
            raise SystemExit("caster_callgrind: callgrind did not dump once at each icount_mark")
        result = {}
        for phase, dump in zip(order, dumps):
            result[phase] = (total(dump) / calls, by_source(dump, calls))
        return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000, help="calls per statement after the warm-up")
    ap.add_argument("--top", type=int, default=8, help="source files listed per row")
    ap.add_argument("--driver", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.driver:
        # One extra phase after the last measured one, so that it too ends at a mark.
        drive(args.calls)
        import bench_dlpackpp as D
        D.icount_mark()
        return 0
    tool = callgrind_tools.missing()
    if tool is not None:
        print("caster callgrind skipped: %s not found (apt-get install valgrind)" % tool)
        return 0
    per = measure(args.calls)
    floor = {m: per[("%s.noop" % m, "a")][0] for m in "PBN"}
    print("Instructions per call net of the same library's empty call (P %.0f, B %.0f, N %.0f), "
          "mean of %d calls after %d warm-up calls" % (floor["P"], floor["B"], floor["N"], args.calls, WARM))
    print()
    print("| | case | caster | reference | extra | ratio |")
    print("|---|---|---:|---:|---:|---:|")
    details = []
    for section, what, caster, reference, arg, caster_floor, reference_floor in rows():
        (c, cf), (r, rf) = per[(caster, arg)], per[(reference, arg)]
        nc, nr = c - floor[caster_floor], r - floor[reference_floor]
        print("| %s | %s | %.0f | %.0f | %+.0f | %.2f |" % (section, what, nc, nr, nc - nr, nc / nr))
        diff = {f: cf.get(f, 0.0) - rf.get(f, 0.0) for f in set(cf) | set(rf)}
        top = sorted(diff.items(), key=lambda kv: -abs(kv[1]))[:args.top]
        details.append((what, [(f, d) for f, d in top if abs(d) >= 1.0]))
    print()
    for what, top in details:
        print("%s: where the difference goes (instructions per call by source file, caster minus reference)"
              % what)
        for f, d in top:
            print("  %+7.1f  %s" % (d, f[:160]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
