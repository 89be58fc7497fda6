# SPDX-License-Identifier: Apache-2.0
"""Instructions per call of each torch2 row (bench_torch2's functions), counted by callgrind.

Usage: PYTHONPATH=<build>/modules python torch2_callgrind.py [--calls N]

Runs itself under `valgrind --tool=callgrind` with collection switched on only inside the
module's functions (--toggle-collect), so each count is the function's own work plus what it
calls (PyTorch's table entry, PyLong_FromLongLong), without the interpreter's call machinery
that the timed table subtracts as the floor. Timing on a shared machine is noisy; instruction
counts are not. Needs valgrind, callgrind_annotate and PyTorch 2.x with the exchange table.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import callgrind_tools

# (what, dlpackpp function, hand-written function); the functions' argument is `t` below.
ROWS = [
    ("owning import", "import_dlpackpp", "import_hand"),
    ("borrow", "borrow_dlpackpp", "borrow_hand"),
    ("borrow split: view_from_object(exchange_api_of(t))", "borrow_view_from_object", "borrow_hand"),
    ("export into torch (to_object, exchange_api_of)", "export_dlpackpp", "export_hand"),
    ("export, the table kept in a static", "export_dlpackpp_static", "export_hand"),
    ("export block: wrap() vs filled by hand", "export_hand", "export_hand_c"),
]
WARM = 100


def functions():
    return sorted({f for _, d, h in ROWS for f in (d, h)})


def drive(calls):
    import torch
    import bench_torch2 as T
    t = torch.arange(8, dtype=torch.float64)
    for name in functions():
        f = getattr(T, name)
        for _ in range(WARM + calls):
            f(t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=10000, help="calls per function after the warm-up")
    ap.add_argument("--driver", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.driver:
        drive(args.calls)
        return 0
    tool = callgrind_tools.missing()
    if tool is not None:
        print("torch2 callgrind skipped: %s not found (apt-get install valgrind)" % tool)
        return 0
    try:
        import torch
        if not hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
            raise ImportError
    except ImportError:
        print("torch2 callgrind skipped: no PyTorch 2.x with __dlpack_c_exchange_api__ in %s" % sys.executable)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        # The exact names, so that a template instantiated for a function (try_borrow's, whose
        # name carries the lambda's) does not toggle collection off again inside it.
        toggles = ["--toggle-collect=(anonymous namespace)::%s(_object*, _object*)" % f for f in functions()]
        subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out] + toggles +
                       [sys.executable, os.path.abspath(__file__), "--driver", "--calls", str(args.calls)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        report = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", out], check=True,
                                stdout=subprocess.PIPE, universal_newlines=True).stdout
    per_call = {}
    for line in report.splitlines():
        m = re.match(r"\s*([\d,]+) .*\(anonymous namespace\)::(\w+)\(_object\*, _object\*\) \[", line)
        if m and m.group(2) in functions():
            per_call[m.group(2)] = int(m.group(1).replace(",", "")) / (WARM + args.calls)
    print("torch2 callgrind: PyTorch %s, instructions per call inside the module function (callee included, "
          "the interpreter's call not), mean of %d calls" % (torch.__version__, WARM + args.calls))
    print()
    print("| case | dlpackpp | by hand | extra | ratio |")
    print("|---|---:|---:|---:|---:|")
    for what, d, h in ROWS:
        if d in per_call and h in per_call:
            print("| %s | %.0f | %.0f | %+.0f | %.2f |" % (what, per_call[d], per_call[h], per_call[d] - per_call[h],
                                                          per_call[d] / per_call[h]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
