# SPDX-License-Identifier: Apache-2.0
"""The guard's Python rows: instructions per call of bench_dlpackpp's imports, each against its
hand-written C counterpart in the same module, checked against benchmarks/README.md's table.

Usage: python icount_guard.py --modules DIR [--limits README.md] [--calls N]

Runs itself under `valgrind --tool=callgrind`, collecting only inside the module's functions
(--toggle-collect: the function's own work and what it calls, not the interpreter's call).
Every function is called first to warm the caches (type lookups, interned names), then
callgrind dumps and zeroes its counters (--dump-before the module's icount_mark) and each
function runs N more times: the figure is the mean of those N, net of the empty call (noop).
With --limits, the rows of the README's table whose case starts with "Python" are checked
(the same table, columns and tolerance as the C++ guard, bench_icount_guard: a row fails
when its ratio passes the committed one by more than the table's "Tolerance: N%") and the
exit status is 1 when one is over its limit or not measured. Exit status 77 (a skip) where NumPy 2 or valgrind
is missing.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import callgrind_tools

SKIP = 77
# (case as the README's table names it, dlpackpp function, hand-written function, argument)
ROWS = [
    ("Python owning import, NumPy 2 (try_from_dlpack)", "numel", "numel_hand_capsule", "a"),
    ("Python borrow, NumPy 2 (try_borrow)", "numel_borrowed", "numel_hand_capsule", "a"),
    ("Python owning import, exchange table (try_from_dlpack)", "numel", "numel_hand_exchange", "x"),
    ("Python borrow, exchange table (try_borrow)", "numel_borrowed", "numel_raw_exchange", "x"),
]
NDIM = 1  # the arguments: NumPy float64[8], the mock framework's float32[8]
WARM = 200
MARK = "icount_mark"
ARGS = ["a", "x"]  # the phases, in order


def functions():
    return sorted({f for _, d, h, _ in ROWS for f in (d, h)} | {"noop"})


def drive(calls):
    """Warms every row up, then runs each argument's rows in a phase of its own (callgrind
    dumps at each mark), the empty call in each."""
    import numpy as np
    import bench_dlpackpp as D
    args = {"a": np.arange(8, dtype=np.float64), "x": D.mock_exchange()}
    # Each function once a phase (a counterpart shared by two rows too), so that a phase's
    # count of a function is `calls` calls.
    phases = [[(getattr(D, f), args[arg]) for f in dict.fromkeys(f for _, d, h, a in ROWS if a == arg
                                                                 for f in (d, h))] + [(D.noop, None)]
              for arg in ARGS]
    for f, arg in (call for phase in phases for call in phase):
        for _ in range(WARM):
            f(arg)
    for phase in phases:
        D.icount_mark()
        for f, arg in phase:
            for _ in range(calls):
                f(arg)


def limits_of(readme):
    """The Python rows between the guard markers: {(case, ndim): (committed ratio, limit)},
    the limit being the committed ratio (dlpackpp instr. / C instr.) plus the tolerance."""
    rows, inside, tolerance = {}, False, None
    with open(readme, encoding="utf-8") as f:
        for line in f:
            if "<!-- icount-guard:begin -->" in line:
                inside = True
            if "<!-- icount-guard:end -->" in line:
                inside = False
            m = re.search(r"Tolerance:\s*([\d.]+)\s*%", line)
            if inside and m and tolerance is None:
                tolerance = float(m.group(1))
            cells = [c.strip() for c in line.strip().split("|")[1:-1]]
            if inside and len(cells) == 5 and cells[0].startswith("Python") and cells[1].isdigit():
                rows[(cells[0], int(cells[1]))] = float(cells[3]) / float(cells[2])
    if tolerance is None:
        raise SystemExit('icount guard: no "Tolerance: N%" between the markers in %s' % readme)
    return {key: (ratio, ratio * (1 + tolerance / 100)) for key, ratio in rows.items()}


def measure(calls):
    """{(function, argument): instructions per call} over the calls of each phase."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        # The exact names, so that a template instantiated for a function (try_borrow's, whose
        # name carries the lambda's) does not toggle collection off again inside it.
        toggles = ["--toggle-collect=(anonymous namespace)::%s(_object*, _object*)" % f for f in functions()]
        mark = callgrind_tools.dump_before(MARK)
        subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, mark] + toggles +
                       [sys.executable, os.path.abspath(__file__), "--driver", "--calls", str(calls)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # out.1: the warm-up, dumped at the first mark; out.2...: the phases but the last, each
        # dumped at the next mark; out itself: the last phase, dumped at exit.
        dumps = [out + ".%d" % (i + 2) for i in range(len(ARGS) - 1)] + [out]
        if not all(os.path.exists(p) for p in dumps) or os.path.exists(out + ".%d" % (len(ARGS) + 1)):
            raise SystemExit("icount guard: callgrind did not dump once at each %s" % MARK)
        per_call = {}
        for arg, dump in zip(ARGS, dumps):
            report = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", dump],
                                    check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout
            for line in report.splitlines():
                m = re.match(r"\s*([\d,]+) .*\(anonymous namespace\)::(\w+)\(_object\*, _object\*\) \[", line)
                if m and m.group(2) in functions():
                    per_call[(m.group(2), arg)] = int(m.group(1).replace(",", "")) / calls
    return per_call


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--modules", help="the folder holding bench_dlpackpp")
    ap.add_argument("--limits", help="benchmarks/README.md: check its Python rows")
    ap.add_argument("--calls", type=int, default=2000, help="measured calls per function")
    ap.add_argument("--driver", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.modules:
        sys.path.insert(0, args.modules)
    tool = callgrind_tools.missing()  # (the driver runs under valgrind: found)
    if tool is not None:
        print("DLPACKPP_TEST_SKIPPED: %s not found (apt-get install valgrind)" % tool)
        return SKIP
    if args.driver:
        drive(args.calls)
        return 0
    try:
        import numpy as np
    except ImportError:
        np = None
    if np is None or int(np.__version__.split(".")[0]) < 2:
        print("DLPACKPP_TEST_SKIPPED: %s has no NumPy 2 (found %s)" % (sys.executable, np and np.__version__))
        return SKIP
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [args.modules, os.environ.get("PYTHONPATH")]))
    per_call = measure(args.calls)
    print("Python rows: NumPy %s, instructions per call inside the module function (callee included, the "
          "interpreter's call not), mean of %d calls after %d warm-up calls, net of the empty call (%s)"
          % (np.__version__, args.calls, WARM, "/".join("%.0f" % per_call.get(("noop", a), 0) for a in ARGS)))
    print("| case | ndim | C instr. | dlpackpp instr. | ratio |")
    print("| --- | --- | --- | --- | --- |")
    limits = limits_of(args.limits) if args.limits else {}
    failed = 0
    for what, d, h, arg in ROWS:
        limit = limits.pop((what, NDIM), None)
        floor = per_call.get(("noop", arg), 0.0)
        d, h = (d, arg), (h, arg)
        if d not in per_call or h not in per_call:
            print("| %s | %d | - | - | - |  <- FAILED: not measured" % (what, NDIM))
            failed += 1
            continue
        c, cpp = per_call[h] - floor, per_call[d] - floor
        over = limit is not None and cpp / c > limit[1]
        failed += over
        print("| %s | %d | %.0f | %.0f | %.3f |%s" % (
            what, NDIM, c, cpp, cpp / c,
            "  <- FAILED: over %.3f (committed %.3f + the tolerance)" % (limit[1], limit[0]) if over else ""))
    for what, ndim in limits:  # a guarded row that this script no longer measures
        print("| %s | %d | - | - | - |  <- FAILED: not measured" % (what, ndim))
        failed += 1
    if args.limits:
        print("icount guard (Python): %s" % ("%d guarded path(s) grew past their limit" % failed if failed
                                              else "every guarded path within its limit"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
