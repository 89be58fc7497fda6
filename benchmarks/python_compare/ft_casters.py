# SPDX-License-Identifier: Apache-2.0
"""Two threads against one on a free-threaded CPython, for every caster route of the pybind11
and nanobind modules, each against a pure-Python loop timed the same way in the same run.

Usage: PYTHONPATH=<build>/tests/freethreaded/modules python3.13t ft_casters.py [--calls N]

Uses the free-threaded stress test's binding modules (tests/freethreaded/ft_bind.cpp, built by
any build configured with a 3.13t interpreter; Release and no sanitizer for figures). Each
thread calls one bound function N times in a Python loop on an array of its own; the threads
start together at a barrier and the figure is calls per second of wall time, the median of
--runs runs. What a machine lets two threads gain varies (2 shared vCPUs give anywhere from
1.2x to 2.3x), so each route's speedup is divided by the speedup of a pure-Python function
called the same way in the same run: 1.0 means the route scales exactly as far as Python
itself does there; below it, something in the route is shared between the threads.
"""
import argparse
import os
import statistics
import sys
import threading
import time

import numpy as np


def python_loop(a):
    """The reference: a pure-Python function of about the routes' call overhead."""
    return ("float64", a)


def timed(fn, arguments, calls):
    """Seconds of wall time for len(arguments) threads each calling fn(argument) `calls` times."""
    barrier = threading.Barrier(len(arguments) + 1)

    def work(argument):
        barrier.wait()
        for _ in range(calls):
            fn(argument)

    threads = [threading.Thread(target=work, args=(a,)) for a in arguments]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    return time.perf_counter() - start


def routes():
    made = []
    for name in ("ft_pybind11", "ft_nanobind"):
        try:
            module = __import__(name)
        except ImportError as e:
            print("%s skipped: %s" % (name, e))
            continue
        made += [
            (name, "TensorView (const&)", module.view, np.float64),
            (name, "ManagedTensor", module.owned, np.float64),
            (name, "TensorAccessor<const double, 1>", module.typed, np.float64),
            (name, "TensorAccessor<double, 1> (writes)", lambda a, f=module.scale_: f(a, 1.0),
             np.float64),
        ]
    return made


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200000, help="calls per thread per run")
    ap.add_argument("--runs", type=int, default=5, help="runs per figure (median reported)")
    args = ap.parse_args()
    if getattr(sys, "_is_gil_enabled", lambda: True)():
        print("DLPACKPP_TEST_SKIPPED: the GIL is enabled (run a free-threaded CPython, 3.13t)")
        return 77
    print("python %s, GIL enabled: False, %d calls per thread, median of %d runs, load average %s"
          % (sys.version.split()[0], args.calls, args.runs,
             " ".join("%.2f" % x for x in os.getloadavg())))
    print("| module | route | 1 thread (calls/s) | 2 threads (calls/s) | 2 / 1 | "
          "pure-Python loop 2 / 1 | route / loop |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for module, route, fn, dtype in routes():
        rates = {}
        loop_rates = {}
        for threads in (1, 2):
            arrays = [np.arange(8, dtype=dtype) for _ in range(threads)]
            fn(arrays[0])  # warm: type caches, interned names
            route_seconds, loop_seconds = [], []
            for _ in range(args.runs):  # interleaved, so that both see the same machine
                route_seconds.append(timed(fn, arrays, args.calls))
                loop_seconds.append(timed(python_loop, arrays, args.calls))
            rates[threads] = threads * args.calls / statistics.median(route_seconds)
            loop_rates[threads] = threads * args.calls / statistics.median(loop_seconds)
        route_gain = rates[2] / rates[1]
        loop_gain = loop_rates[2] / loop_rates[1]
        print("| %s | %s | %.3g | %.3g | %.2f | %.2f | %.2f |" % (
            module, route, rates[1], rates[2], route_gain, loop_gain, route_gain / loop_gain))
        sys.stdout.flush()
    return 0


sys.exit(main())
