# SPDX-License-Identifier: Apache-2.0
"""Throughput of borrowing and owning import on a free-threaded CPython, 1 thread against 2.

Usage: PYTHONPATH=<build>/tests/freethreaded/modules python3.13t ft_throughput.py [--calls N]

Uses the free-threaded stress test's C API module (tests/freethreaded/ft_capi.cpp, built by
.ci/freethreaded.sh or any build configured with a 3.13t interpreter, Release for figures):
`spin(route, objects, calls)` starts one C++ thread per object, each attached to the
interpreter, calling `try_borrow` ("borrow") or `try_from_dlpack` ("import") on its object N
times, all at once. The calls run in C++, not in a Python loop: on 3.13t every Python-level call
takes a reference to the one shared function object, which alone keeps a loop of calls to any
builtin from scaling (CPython 3.14 defers those references). The figure is calls per second of
wall time, the median of --runs runs; "own" gives each thread its own object, "shared" one
object to all (its reference count and the producer's locking are then shared too). With no
lock on the per-tensor path, 2 threads on 2 idle cores make close to twice the calls of one;
on a busy machine the second thread waits for a core (note the load average printed).
"""
import argparse
import os
import statistics
import sys

import ft_capi


def producers():
    made = {"dlpackpp.Tensor (exchange table)": lambda: ft_capi.make(8, "float64")}
    try:
        import numpy as np
        made["NumPy %s ndarray (__dlpack__)" % np.__version__] = \
            lambda: np.arange(8, dtype=np.float64)
    except ImportError:
        pass
    try:
        import torch
        made["torch.Tensor %s (exchange table)" % torch.__version__.split("+")[0]] = \
            lambda: torch.arange(8, dtype=torch.float64)
    except ImportError:
        pass
    return made


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=1000000, help="calls per thread per run")
    ap.add_argument("--runs", type=int, default=5, help="runs per figure (median reported)")
    args = ap.parse_args()
    print("python %s, GIL enabled: %s, %d calls per thread, median of %d runs, load average %s"
          % (sys.version.split()[0], sys._is_gil_enabled(), args.calls, args.runs,
             " ".join("%.2f" % x for x in os.getloadavg())))
    print("| producer | route | objects | 1 thread (calls/s) | 2 threads (calls/s) | 2 / 1 |")
    print("| --- | --- | --- | ---: | ---: | ---: |")
    for name, make in producers().items():
        for route in ("borrow", "import"):
            assert ft_capi.borrowed(make()) == ("float64", 28.0)
            for sharing in ("own", "shared"):
                rates = {}
                for threads in (1, 2):
                    one = make()
                    objects = [one] * threads if sharing == "shared" else [make() for _ in range(threads)]
                    seconds = statistics.median(
                        ft_capi.spin(route, objects, args.calls) for _ in range(args.runs))
                    rates[threads] = threads * args.calls / seconds
                print("| %s | %s | %s | %.3g | %.3g | %.2f |" % (
                    name, route, sharing, rates[1], rates[2], rates[2] / rates[1]))
                sys.stdout.flush()


main()
