# SPDX-License-Identifier: Apache-2.0
"""Per-call cost of dlpackpp::python against nanobind's nb::ndarray, side by side in one process.

Run by run.sh (which builds bench_dlpackpp and bench_nanobind the same way and puts them on
PYTHONPATH). Each statement is timed with timeit; the cases are interleaved run by run so that
drift on a shared machine hits both columns alike, and the median over the runs is reported
in nanoseconds of this thread's CPU time per call (the Python-level loop and call included,
as a user pays them).
"""
import argparse
import os
import platform
import statistics
import sys
import time
import timeit

# NumPy's OpenBLAS threads spin on the cores this benchmark runs on: one thread is quieter.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import bench_dlpackpp as D  # noqa: E402
import bench_nanobind as N  # noqa: E402

try:
    from importlib.metadata import version as _version
    NANOBIND_VERSION = _version("nanobind")
except Exception:  # the version is informational only
    NANOBIND_VERSION = "?"

# (section, what, dlpackpp statement, nanobind statement or None). The "pypi" suite runs in the
# venv run.sh builds (NumPy 2.x); the "debian" suite under the system Python with Debian's
# NumPy 1.24 and PyTorch 1.13, which speak only the legacy protocol (they reject max_version).
SUITES = {
    "pypi": [
        ("-", "empty call, no conversion (the floor)", "D.noop(a)", "N.noop(a)"),
        ("a", "NumPy float64[8] -> numel: dlpackpp from_dlpack", "D.numel(a)", "N.numel(a)"),
        ("a", "NumPy float64[8] -> numel: dlpackpp try_borrow", "D.numel_borrowed(a)", "N.numel(a)"),
        ("a", "NumPy -> float64, 1-d, contiguous checked, element 0: from_dlpack (only_reading), require_ chain",
         "D.first_f64(a)", "N.first_f64(a)"),
        ("a", "the same, checks as plain comparisons", "D.first_f64_plain(a)", "N.first_f64(a)"),
        ("a", "the same through try_borrow, require_ chain", "D.first_f64_borrowed(a)", "N.first_f64(a)"),
        ("a", "the same without only_reading (max_version asked)", "D.first_f64_versioned(a)", "N.first_f64(a)"),
        ("b", "C++ -> Python -> C++: make(8) then numel", "D.numel(D.make(8))", "N.numel(N.make(8))"),
        ("b", "C++ -> NumPy array -> C++ (np.from_dlpack vs nb::numpy return)",
         "D.numel(np.from_dlpack(D.make(8)))", "N.numel(N.make_numpy(8))"),
        ("c", "mock exchange-API tensor -> numel: from_dlpack (exchange table)", "D.numel(x)", "N.numel(x)"),
        ("c", "mock exchange-API tensor -> numel: try_borrow (exchange table)", "D.numel_borrowed(x)", "N.numel(x)"),
        ("c", "mock tensor without the table (__dlpack__ only) -> numel: from_dlpack", "D.numel(y)", "N.numel(y)"),
        ("c", "mock exchange-API tensor: the table's borrow entry called directly", "D.numel_raw_exchange(x)", None),
        ("ctx", "NumPy's own np.from_dlpack(a), for scale", "np.from_dlpack(a)", None),
    ],
    "debian": [
        ("-", "empty call, no conversion (the floor)", "D.noop(a)", "N.noop(a)"),
        ("a", "NumPy 1.24 float64[8] -> numel: from_dlpack", "D.numel(a)", "N.numel(a)"),
        ("a", "NumPy 1.24 float64[8] -> numel: try_borrow", "D.numel_borrowed(a)", "N.numel(a)"),
        ("t", "PyTorch 1.13 float64[8] -> numel: from_dlpack", "D.numel(t)", "N.numel(t)"),
        ("t", "PyTorch 1.13 float64[8] -> numel: try_borrow", "D.numel_borrowed(t)", "N.numel(t)"),
        ("t", "PyTorch 1.13 -> float64, 1-d, contiguous checked, element 0", "D.first_f64(t)", "N.first_f64(t)"),
        ("b", "C++ -> torch.utils.dlpack.from_dlpack -> C++", "D.numel(torch_from_dlpack(D.make(8)))",
         "N.numel(torch_from_dlpack(N.make(8)))"),
        ("ctx", "PyTorch's own torch.utils.dlpack.from_dlpack(t), for scale", "torch_from_dlpack(t)", None),
    ],
}


# The binding-library suite (--suite bindings, same venv as "pypi"): each row a dlpackpp caster
# against a reference for the same import: by hand over python.hpp on the library's plain handle
# (the target: at most 10% over it), or nanobind's own nb::ndarray (at least as fast).
# (section, what, caster statement, reference statement, floor of the caster, floor of the reference)
BINDINGS = [
    ("-", "pybind11: empty call, no conversion (the floor)", "P.noop(a)", None, None, None),
    ("-", "nanobind: empty call, no conversion (the floor)", "B.noop(a)", None, None, None),
    ("p", "pybind11, NumPy float64[8] -> TensorView (numel) vs try_borrow by hand", "P.view_numel(a)",
     "P.view_numel_hand(a)", "P", "P"),
    ("p", "the same, parameter `const TensorView&`", "P.view_numel_ref(a)", "P.view_numel_hand(a)", "P", "P"),
    ("p", "pybind11, NumPy -> ManagedTensor (numel) vs try_from_dlpack by hand", "P.owned_numel(a)",
     "P.owned_numel_hand(a)", "P", "P"),
    ("p", "pybind11, NumPy -> TensorAccessor<const double, 1>, element 0 vs by hand", "P.first_f64(a)",
     "P.first_f64_hand(a)", "P", "P"),
    ("p", "the same, parameter `const TensorAccessor<const double, 1>&`", "P.first_f64_ref(a)",
     "P.first_f64_hand(a)", "P", "P"),
    ("p", "pybind11, exchange-table tensor -> TensorView vs try_borrow by hand", "P.view_numel(x)",
     "P.view_numel_hand(x)", "P", "P"),
    ("p", "the same, parameter `const TensorView&`", "P.view_numel_ref(x)", "P.view_numel_hand(x)", "P", "P"),
    ("p", "pybind11, make(8) -> dlpackpp.Tensor vs to_pyobject by hand", "P.make(8)", "P.make_hand(8)", "P", "P"),
    ("b", "nanobind, NumPy float64[8] -> TensorView (numel) vs try_borrow by hand", "B.view_numel(a)",
     "B.view_numel_hand(a)", "B", "B"),
    ("b", "the same, parameter `const TensorView&`", "B.view_numel_ref(a)", "B.view_numel_hand(a)", "B", "B"),
    ("b", "nanobind, NumPy -> ManagedTensor (numel) vs try_from_dlpack by hand", "B.owned_numel(a)",
     "B.owned_numel_hand(a)", "B", "B"),
    ("b", "nanobind, NumPy -> TensorAccessor<const double, 1>, element 0 vs by hand", "B.first_f64(a)",
     "B.first_f64_hand(a)", "B", "B"),
    ("b", "the same, parameter `const TensorAccessor<const double, 1>&`", "B.first_f64_ref(a)",
     "B.first_f64_hand(a)", "B", "B"),
    ("b", "nanobind, exchange-table tensor -> TensorView vs try_borrow by hand", "B.view_numel(x)",
     "B.view_numel_hand(x)", "B", "B"),
    ("b", "the same, parameter `const TensorView&`", "B.view_numel_ref(x)", "B.view_numel_hand(x)", "B", "B"),
    ("b", "nanobind, make(8) -> dlpackpp.Tensor vs to_pyobject by hand", "B.make(8)", "B.make_hand(8)", "B", "B"),
    ("n", "nanobind caster vs nb::ndarray: NumPy float64[8], untyped (numel)", "B.view_numel(a)", "N.numel(a)",
     "B", "N"),
    ("n", "nanobind caster vs nb::ndarray: NumPy, float64 1-d contiguous, element 0", "B.first_f64(a)",
     "N.first_f64(a)", "B", "N"),
    ("n", "nanobind caster vs nb::ndarray: returning 8 float64 (make)", "B.make(8)", "N.make(8)", "B", "N"),
    ("n", "nanobind caster vs nb::ndarray: exchange-table tensor, untyped", "B.view_numel(x)", "N.numel(x)",
     "B", "N"),
]
# Where PyTorch 2.x (whose tensors carry the exchange table) is importable.
BINDINGS_TORCH = [
    ("p", "pybind11, PyTorch float64[8] -> TensorView vs try_borrow by hand", "P.view_numel(t)",
     "P.view_numel_hand(t)", "P", "P"),
    ("p", "the same, parameter `const TensorView&`", "P.view_numel_ref(t)", "P.view_numel_hand(t)", "P", "P"),
    ("p", "pybind11, PyTorch -> TensorAccessor<const double, 1>, element 0 vs by hand", "P.first_f64(t)",
     "P.first_f64_hand(t)", "P", "P"),
    ("b", "nanobind, PyTorch float64[8] -> TensorView vs try_borrow by hand", "B.view_numel(t)",
     "B.view_numel_hand(t)", "B", "B"),
    ("b", "the same, parameter `const TensorView&`", "B.view_numel_ref(t)", "B.view_numel_hand(t)", "B", "B"),
    ("n", "nanobind caster vs nb::ndarray: PyTorch float64[8], untyped", "B.view_numel(t)", "N.numel(t)", "B", "N"),
    ("n", "nanobind caster vs nb::ndarray: PyTorch, float64 1-d contiguous, element 0", "B.first_f64(t)",
     "N.first_f64(t)", "B", "N"),
]


# The PyTorch 2.x suite (--suite torch2, the venv with torch 2.x installed): dlpackpp against the
# same exchange-table call written by hand in C in one module (bench_torch2), the table kept in
# a static there. (section, what, dlpackpp statement, hand-written statement, target ratio net
# of the floor or None). `t` is torch.arange(8, dtype=float64), `t4` a float32[2, 3, 4, 5].
TORCH2 = [
    ("-", "empty call, no conversion (the floor)", "T.noop(t)", None, None),
    ("i", "owning import, float64[8] -> numel: try_from_dlpack vs managed_tensor_from_py_object_no_sync",
     "T.import_dlpackpp(t)", "T.import_hand(t)", 1.3),
    ("i", "the same, float32[2, 3, 4, 5]", "T.import_dlpackpp(t4)", "T.import_hand(t4)", 1.3),
    ("b", "borrow, float64[8] -> numel: try_borrow vs dltensor_from_py_object_no_sync",
     "T.borrow_dlpackpp(t)", "T.borrow_hand(t)", 1.15),
    ("b", "the same, float32[2, 3, 4, 5]", "T.borrow_dlpackpp(t4)", "T.borrow_hand(t4)", 1.15),
    ("b", "split: view_from_object(exchange_api_of(t), ...), the validated view without try_borrow's "
     "dispatch", "T.borrow_view_from_object(t)", "T.borrow_hand(t)", None),
    ("e", "export into torch, wrap() of 8 float64: to_object(exchange_api_of(t), ...) vs "
     "managed_tensor_to_py_object_no_sync", "T.export_dlpackpp(t)", "T.export_hand(t)", None),
    ("e", "the same, to_object with the table kept in a static", "T.export_dlpackpp_static(t)",
     "T.export_hand(t)", None),
    ("e", "both by hand: wrap()'s export block vs a malloc'd block filled by hand", "T.export_hand(t)",
     "T.export_hand_c(t)", None),
    ("ctx", "PyTorch's own t.numel() from Python, for scale", "t.numel()", None, None),
    ("ctx", "PyTorch's own torch.from_dlpack(t), for scale", "torch.from_dlpack(t)", None, None),
]


def torch2_main(args):
    try:
        import torch
    except ImportError:
        print("torch2 suite skipped: %s cannot import torch (pip install torch in the venv)" % sys.executable)
        return 0
    if not hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
        print("torch2 suite skipped: PyTorch %s has no __dlpack_c_exchange_api__ (PyTorch 2.x with the "
              "DLPack exchange API needed)" % torch.__version__)
        return 0
    import bench_torch2 as T
    env = {"T": T, "torch": torch, "t": torch.arange(8, dtype=torch.float64),
           "t4": torch.zeros(2, 3, 4, 5, dtype=torch.float32)}
    info = T.table_info(env["t"])
    for _, what, sd, sh, _ in TORCH2:  # the same answer on both sides before timing
        if sh is None:
            continue
        d, h = eval(sd, env), eval(sh, env)
        if isinstance(d, torch.Tensor):
            d, h = (d.dtype, d.tolist()), (h.dtype, h.tolist())
        if d != h:
            raise SystemExit("bench.py: %r and %r disagree (%s)" % (sd, sh, what))
    cases = [(section, what, sd, sh) for section, what, sd, sh, _ in TORCH2]
    if args.count_mallocs:
        return count_mallocs(args, cases, env, columns=("dlpackpp", "by hand"))
    stmts = sorted({s for c in cases for s in c[2:] if s is not None})
    med, worst = time_statements(stmts, env, args)
    floor = med["T.noop(t)"]
    print("torch2 suite: Python %s (%s), PyTorch %s (exchange table %d.%d), NumPy %s, %s, %s; median of %d "
          "runs, ns of thread CPU time per call" % (
              platform.python_version(), "a venv" if sys.prefix != sys.base_prefix else sys.executable,
              torch.__version__, info["version"][0],
              info["version"][1], np.__version__, args.compiler, platform.machine(), args.runs))
    print()
    print("| | case | dlpackpp | by hand | dlpackpp / by hand | net of the floor: dlpackpp | by hand | ratio "
          "| target |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for section, what, sd, sh, target in TORCH2:
        d = med[sd]
        if sh is None:
            net = "%.0f" % (d - floor) if section not in ("-", "ctx") else ""
            print("| %s | %s | %.0f | | | %s | | | |" % (section, what, d, net))
            continue
        h = med[sh]
        nd, nh = d - floor, h - floor
        print("| %s | %s | %.0f | %.0f | %.2f | %.0f | %.0f | %s | %s |" % (
            section, what, d, h, d / h, nd, nh, "%.2f" % (nd / nh) if nh > 0 else "-",
            "<= %.2f" % target if target else ""))
    print()
    print("widest min-max spread over the runs: %.0f%% of the median" % (100 * worst))
    return 0


def time_statements(stmts, env, args):
    """Median ns per call of each statement, the statements interleaved run by run."""
    numbers = {s: max(1000, int(args.target_s * 1e9 / max(per_call_ns(s, env, 2000), 1.0))) for s in stmts}
    samples = {s: [] for s in stmts}
    for _ in range(args.runs):
        for s in stmts:
            samples[s].append(per_call_ns(s, env, numbers[s]))
    med = {s: statistics.median(v) for s, v in samples.items()}
    worst = max((max(v) - min(v)) / med[s] for s, v in samples.items())
    return med, worst


def bindings_arguments():
    """The bindings suite's arguments: NumPy float64[8] (a), the mock exchange-table tensor (x)
    and, where the venv's PyTorch has the exchange table, torch float64[8] (t)."""
    args = {"a": np.arange(8.0), "x": D.mock_exchange()}
    try:
        import torch
        if hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
            args["t"] = torch.arange(8, dtype=torch.float64)
    except ImportError:
        pass
    return args


def bindings_main(args):
    import bench_nb_casters as B
    import bench_pybind11 as P
    env = dict(bindings_arguments(), P=P, B=B, N=N, np=np)
    rows = list(BINDINGS)
    peers = "NumPy %s" % np.__version__
    if "t" in env:
        import torch
        rows += BINDINGS_TORCH
        peers += ", PyTorch %s" % torch.__version__
    for _, what, sc, sr, _, _ in rows:  # the same answer on both sides before timing
        if sr is not None:
            c, r = eval(sc, env), eval(sr, env)
            if isinstance(c, (int, float)) and c != r:
                raise SystemExit("bench.py: %r and %r disagree (%s)" % (sc, sr, what))
    floors = {"P": "P.noop(a)", "B": "B.noop(a)", "N": "N.noop(a)"}
    stmts = sorted({s for row in rows for s in row[2:4] if s is not None} | set(floors.values()))
    med, worst = time_statements(stmts, env, args)
    import pybind11
    print("bindings suite: Python %s (%s), %s, pybind11 %s, nanobind %s, %s, %s; median of %d runs, "
          "ns of thread CPU time per call" % (platform.python_version(), sys.executable, peers,
                                              pybind11.__version__, args.nanobind_version, args.compiler,
                                              platform.machine(), args.runs))
    print()
    print("| | case | caster | reference | caster / reference | net of the floor: caster | reference | ratio |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for section, what, sc, sr, fc, fr in rows:
        c = med[sc]
        if sr is None:
            print("| %s | %s | %.0f | | | | | |" % (section, what, c))
            continue
        r = med[sr]
        nc, nr = c - med[floors[fc]], r - med[floors[fr]]
        print("| %s | %s | %.0f | %.0f | %.2f | %.0f | %.0f | %s |" % (
            section, what, c, r, c / r, nc, nr, "%.2f" % (nc / nr) if nr > 0 else "-"))
    print()
    print("widest min-max spread over the runs: %.0f%% of the median" % (100 * worst))
    return 0


def environment(suite):
    env = {"D": D, "N": N, "np": np, "a": np.arange(8.0)}
    if suite == "pypi":
        env.update(x=D.mock_exchange(), y=D.mock_dunder())
    else:
        import torch
        from torch.utils.dlpack import from_dlpack as torch_from_dlpack
        env.update(torch=torch, torch_from_dlpack=torch_from_dlpack, t=torch.arange(8, dtype=torch.float64))
    return env


def per_call_ns(stmt, env, number):
    # CPU time of this thread, not wall time: on a machine shared with other work, time spent
    # descheduled would otherwise land on whichever statement happened to be running.
    return timeit.Timer(stmt, timer=time.thread_time, globals=env).timeit(number) / number * 1e9


def count_mallocs(args, cases, env, columns=("dlpackpp", "nanobind")):
    import ctypes
    try:
        counter = ctypes.CDLL(None).bench_malloc_count
    except AttributeError:
        raise SystemExit("bench.py --count-mallocs: run with LD_PRELOAD=<build>/libcount_malloc.so")
    counter.restype = ctypes.c_ulonglong
    calls = 20000

    def per_call(stmt):
        code = compile("for _ in range(%d): %s" % (calls, stmt), "<count>", "exec")
        exec(code, env)  # warm-up: caches, the keyword fallback, free lists
        before = counter()
        exec(code, env)
        return (counter() - before) / calls

    print("%s suite: C heap calls (malloc, calloc, realloc, aligned) per call, mean of %d calls;"
          " Python's own small-object allocator is not counted" % (args.suite, calls))
    print()
    print("| | case | %s | %s |" % columns)
    print("|---|---|---:|---:|")
    for section, what, sd, sn in cases:
        print("| %s | %s | %.2f | %s |" % (section, what, per_call(sd), "" if sn is None else "%.2f" % per_call(sn)))
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=31, help="timed runs per statement (median reported)")
    ap.add_argument("--target-s", type=float, default=0.02, help="seconds per timed run, per statement")
    ap.add_argument("--suite", choices=sorted(SUITES) + ["bindings", "torch2"], default="pypi")
    ap.add_argument("--compiler", default="?", help="for the header line only")
    ap.add_argument("--nanobind-version", default=NANOBIND_VERSION, help="for the header line only")
    ap.add_argument("--count-mallocs", action="store_true",
                    help="count C heap calls per call instead of timing (needs count_malloc's LD_PRELOAD)")
    args = ap.parse_args()

    if args.suite == "bindings":
        return bindings_main(args)
    if args.suite == "torch2":
        return torch2_main(args)
    cases = SUITES[args.suite]
    env = environment(args.suite)
    stmts = sorted({s for c in cases for s in c[2:] if s is not None})
    # Both sides must give the same answer before anything is timed.
    for _, what, sd, sn in cases:
        if sn is not None and eval(sd, env) != eval(sn, env):
            raise SystemExit("bench.py: %r and %r disagree (%s)" % (sd, sn, what))
    if args.count_mallocs:
        return count_mallocs(args, cases, env)
    med, worst = time_statements(stmts, env, args)

    peers = "NumPy %s" % np.__version__
    if "torch" in env:
        peers += ", PyTorch %s" % env["torch"].__version__
    print("%s suite: Python %s (%s), %s, nanobind %s, %s, %s; median of %d runs, ns of thread CPU time per call"
          % (args.suite, platform.python_version(), sys.executable, peers, args.nanobind_version, args.compiler,
             platform.machine(), args.runs))
    print()
    print("| | case | dlpackpp | nanobind | nanobind / dlpackpp | net of the floor: dlpackpp | nanobind | ratio |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    floor_d, floor_n = med["D.noop(a)"], med["N.noop(a)"]
    for section, what, sd, sn in cases:
        d = med[sd]
        row = ["%s" % section, what, "%.0f" % d]
        if sn is None:
            row += ["", "", "%.0f" % (d - floor_d) if section != "ctx" else "", "", ""]
        else:
            n = med[sn]
            row += ["%.0f" % n, "%.2f" % (n / d)]
            if section == "-":
                row += ["", "", ""]
            else:
                nd, nn = d - floor_d, n - floor_n
                row += ["%.0f" % nd, "%.0f" % nn, "%.2f" % (nn / nd) if nd > 0 else "-"]
        print("| " + " | ".join(row) + " |")
    print()
    print("widest min-max spread over the runs: %.0f%% of the median" % (100 * worst))
    return 0


if __name__ == "__main__":
    sys.exit(main())
