# SPDX-License-Identifier: Apache-2.0
"""dlpackpp without the GIL: THREADS threads (8) run ITERATIONS rounds (3000) each at once,
importing, borrowing and exporting through the C API module (ft_capi, <dlpackpp/python.hpp>)
and both casters (ft_pybind11, ft_nanobind), all declaring they run without the GIL.

Every round starts at a barrier whose action makes one new dlpackpp.Tensor that all threads
then use at the same moment: borrowed, imported with ownership (which exports it through its
exchange table), exported with __dlpack__ and np.from_dlpack, read through typed overloads, its
shape and device read. Each thread also imports its own producers of 40 Python types (more than
the 16-entry type cache holds: entries are evicted while other threads use theirs), speaking
the versioned or only the legacy protocol, with or without a __dict__, around a dlpackpp.Tensor
or a NumPy array; NumPy arrays and PyTorch tensors directly; and writes through mutable
accessors. Exports go into a queue that another thread takes them from, checks and drops, so
deleters run on threads other than the one that exported. Every result is checked against what
was made; every failure is counted by path and the first ones printed.

Each round also hands one capsule to every thread at once (a producer whose __dlpack__ returns
the same capsule each time, as decision 16 of docs/python.md allows for): whatever route each
thread takes, exactly one of them may take or lease it, and the deleter runs once (ASan, TSan).

Environment: DLPACKPP_FT_THREADS, DLPACKPP_FT_ITERATIONS, DLPACKPP_FT_MODULES (comma list,
default ft_capi,ft_pybind11,ft_nanobind), DLPACKPP_FT_PEERS (comma list of numpy, torch;
default: those importable; "none" under ThreadSanitizer, whose reports in uninstrumented
wheels would not be ours).
"""
import collections
import importlib
import os
import queue
import sys
import sysconfig
import threading
import time
import traceback


def skip(why):
    print("DLPACKPP_TEST_SKIPPED: " + why)
    sys.stdout.flush()
    sys.exit(0)


if not sysconfig.get_config_var("Py_GIL_DISABLED"):
    skip("%s is not a free-threaded CPython (build 3.13 with ./configure --disable-gil; "
         ".ci/freethreaded.sh does)" % sys.executable)

THREADS = int(os.environ.get("DLPACKPP_FT_THREADS", "8"))
ITERATIONS = int(os.environ.get("DLPACKPP_FT_ITERATIONS", "3000"))
MODULES = os.environ.get("DLPACKPP_FT_MODULES", "ft_capi,ft_pybind11,ft_nanobind").split(",")
DTYPES = ("float32", "float64", "int32", "int64")


def import_without_gil(name):
    """Imports `name` and fails unless the GIL is still off afterwards."""
    module = importlib.import_module(name)
    if sys._is_gil_enabled():
        print("error: importing %s turned the GIL back on (it does not declare Py_mod_gil = "
              "Py_MOD_GIL_NOT_USED)" % name)
        sys.exit(1)
    return module


if sys._is_gil_enabled():
    print("error: the GIL is on before anything was imported (PYTHON_GIL=1 or -X gil=1?)")
    sys.exit(1)
capi = import_without_gil("ft_capi")
casters = [import_without_gil(name) for name in MODULES if name != "ft_capi"]

requested = os.environ.get("DLPACKPP_FT_PEERS")
peers = {}
for name in ("numpy", "torch"):
    if requested is not None and name not in requested.split(","):
        continue
    try:
        peers[name] = import_without_gil(name)
    except ImportError as e:
        if requested is not None:
            print("error: %s was asked for and is not importable: %s" % (name, e))
            sys.exit(1)
np = peers.get("numpy")
torch = peers.get("torch")


def expected(n, dtype):
    return (dtype, float(n * (n - 1) // 2))


# ---- 40 producer types --------------------------------------------------------------------
def versioned_dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    return self.inner.__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device,
                                 copy=copy)


def legacy_dlpack(self, stream=None):  # no max_version: importers fall back, once per type
    return self.inner.__dlpack__(stream=stream)


def dlpack_device(self):
    return self.inner.__dlpack_device__()


def init(self, inner):
    self.inner = inner


PRODUCER_TYPES = []
for i in range(40):
    namespace = {"__init__": init, "__dlpack_device__": dlpack_device,
                 "__dlpack__": legacy_dlpack if i % 4 >= 2 else versioned_dlpack}
    if i % 2 == 0:
        namespace["__slots__"] = ("inner",)  # no __dict__: the kept __dlpack__ applies
    PRODUCER_TYPES.append(type("Producer%02d" % i, (), namespace))


def producer(kind, n, dtype):
    """A producer of type `kind` around a fresh dlpackpp.Tensor, or a NumPy array (odd kinds
    when NumPy is there)."""
    if np is not None and kind % 8 >= 4:
        inner = np.arange(n, dtype=dtype)
    else:
        inner = capi.make(n, dtype)
    return PRODUCER_TYPES[kind](inner)


class OneCapsule:
    """A producer that hands out one capsule, the same to every caller."""

    __slots__ = ("capsule",)

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule


# ---- the rounds ---------------------------------------------------------------------------
failures = collections.Counter()
first_failures = []
lock = threading.Lock()
passed = threading.local()  # per thread: the checks that passed
exports = queue.SimpleQueue()
shared = [None]
rounds = [0]
one_capsule = [None, 0]  # the round's shared-capsule producer, how many threads took it


def record(path, what):
    with lock:
        failures[path] += 1
        if len(first_failures) < 12:
            first_failures.append("%s: %s" % (path, what))


def check(path, call, want):
    try:
        got = call()
        got = (got[0], float(got[1]))
    except Exception as e:  # noqa: BLE001 - every failure is counted and reported
        record(path, "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
        return
    if got != want:
        record(path, "got %r, expected %r" % (got, want))
    else:
        passed.count += 1


def next_round():
    """The barrier's action (one thread, while the others wait): the round's shared tensor."""
    r = rounds[0]
    rounds[0] = r + 1
    if r > 0 and one_capsule[1] != 1:
        record("one capsule, every thread", "round %d: taken %d times" % (r - 1, one_capsule[1]))
    n, dtype = 3 + r % 13, DTYPES[r % 4]
    shared[0] = (capi.make(n, dtype), expected(n, dtype))
    one_capsule[:] = [OneCapsule(capi.capsule(n, dtype, r % 2 == 0)), 0]


def take_one_capsule(tid, it, want):
    """This thread's try at the round's shared capsule, by a route that varies per thread and
    round: a success is counted (exactly one per round); a refusal is expected."""
    producer = one_capsule[0]
    routes = [("capi.owned", capi.owned), ("capi.borrowed", capi.borrowed),
              ("capi.reading", capi.reading),
              ("capi.consume", lambda p: capi.consume(p.capsule))]
    for m in casters:
        # Not the typed overload set: an overload that leases the capsule and declines its
        # dtype has used it up, and the round would have no taker to count.
        routes += [(m.__name__ + ".owned", m.owned), (m.__name__ + ".view", m.view)]
    path, route = routes[(tid * 3 + it) % len(routes)]
    try:
        got = route(producer)
    except (ValueError, TypeError, BufferError) as e:
        if "consumed" not in str(e) and "incompatible function arguments" not in str(e):
            record("one capsule: " + path, "%s: %s" % (type(e).__name__, str(e).splitlines()[0]))
        return
    except Exception as e:  # noqa: BLE001 - every failure is counted and reported
        record("one capsule: " + path, "%s: %s" % (type(e).__name__, e))
        return
    with lock:
        one_capsule[1] += 1
    if (got[0], float(got[1])) != want:
        record("one capsule: " + path, "got %r, expected %r" % (got, want))
    else:
        passed.count += 1


def export(path, kind, make, want):
    """Puts what `make` exports into the queue for another thread, counting a failure."""
    try:
        exports.put((kind, make(), want))
    except Exception as e:  # noqa: BLE001 - every failure is counted and reported
        record(path, "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))


def take_exports(count):
    """Checks and drops up to `count` exports another thread made."""
    for _ in range(count):
        try:
            kind, item, want = exports.get_nowait()
        except queue.Empty:
            return
        if kind == "capsule":
            check("capi.consume(capsule from another thread)", lambda: capi.consume(item), want)
        elif kind == "numpy":
            check("np.from_dlpack(shared), dropped on another thread",
                  lambda: (str(item.dtype), float(item.sum())), want)
        else:
            check("caster-returned dlpackpp.Tensor, borrowed on another thread",
                  lambda: capi.borrowed(item), want)
        del item


def shape_of(tensor, want):
    """The shared tensor's properties read from every thread: (dtype, sum of its shape's
    range) where they agree with what was made."""
    n = tensor.shape[0]
    seen = (tensor.dtype, tensor.device, tensor.__dlpack_device__())
    if seen != (want[0], "cpu", (1, 0)):
        return ("dtype, device, __dlpack_device__() = %r" % (seen,), 0.0)
    return (tensor.dtype, float(n * (n - 1) // 2))


totals = []


def worker(tid, barrier):
    passed.count = 0
    try:
        for it in range(ITERATIONS):
            barrier.wait()
            tensor, want = shared[0]
            take_one_capsule(tid, it, want)
            # The shared tensor, from every thread at once.
            check("capi.borrowed(shared)", lambda: capi.borrowed(tensor), want)
            check("capi.owned(shared)", lambda: capi.owned(tensor), want)
            check("shared.shape, .dtype, .device", lambda: shape_of(tensor, want), want)
            for m in casters:
                check(m.__name__ + ".typed(shared)", lambda: m.typed(tensor), want)
                check(m.__name__ + ".view(shared)", lambda: m.view(tensor), want)
                if it % 2 == tid % 2:
                    export(m.__name__ + ".passed(shared)", "tensor", lambda: m.passed(tensor), want)
            export("shared.__dlpack__(max_version=(1, 0))", "capsule",
                   lambda: tensor.__dlpack__(max_version=(1, 0)), want)
            if np is not None and it % 4 == tid % 4:
                export("np.from_dlpack(shared)", "numpy", lambda: np.from_dlpack(tensor), want)
            # This thread's own producers: 40 types, 4 dtypes.
            kind = (tid * 7 + it) % len(PRODUCER_TYPES)
            m_, dtype = 5 + (it + tid) % 11, DTYPES[(it // 3 + tid) % 4]
            mine, mine_want = producer(kind, m_, dtype), expected(m_, dtype)
            label = "Producer%02d" % kind
            check("capi.owned(%s)" % label, lambda: capi.owned(mine), mine_want)
            check("capi.reading(%s)" % label, lambda: capi.reading(mine), mine_want)
            check("capi.borrowed(%s)" % label, lambda: capi.borrowed(mine), mine_want)
            for m in casters:
                check(m.__name__ + ".typed(%s)" % label, lambda: m.typed(mine), mine_want)
                check(m.__name__ + ".owned(%s)" % label, lambda: m.owned(mine), mine_want)
                check(m.__name__ + ".view(%s)" % label, lambda: m.view(mine), mine_want)
            if casters:
                m = casters[it % len(casters)]
                own = producer(kind, m_, dtype)  # written: private to this thread
                doubled = (dtype, 2 * mine_want[1])
                check(m.__name__ + ".scale_(%s)" % label, lambda: m.scale_(own, 2), doubled)
                check("capi.owned(%s after scale_)" % label, lambda: capi.owned(own), doubled)
            capsule = capi.capsule(m_, dtype, it % 2 == 0)
            check("capi.consume(capsule)", lambda: capi.consume(capsule), mine_want)
            if np is not None:
                array = np.arange(m_, dtype=dtype)
                check("capi.borrowed(ndarray)", lambda: capi.borrowed(array), mine_want)
                for m in casters:
                    check(m.__name__ + ".typed(ndarray)", lambda: m.typed(array), mine_want)
            if torch is not None:
                t = torch.arange(m_, dtype=getattr(torch, dtype))
                check("capi.owned(torch)", lambda: capi.owned(t), mine_want)
                for m in casters:
                    check(m.__name__ + ".typed(torch)", lambda: m.typed(t), mine_want)
                    check(m.__name__ + ".owned(torch)", lambda: m.owned(t), mine_want)
            take_exports(3)
    except threading.BrokenBarrierError:
        pass
    except Exception:  # noqa: BLE001 - an error outside check() is a failure too
        record("thread %d" % tid, traceback.format_exc().splitlines()[-1])
        barrier.abort()
    with lock:
        totals.append(passed.count)


def main():
    print("python %s (%s), GIL enabled: %s; %d threads x %d rounds; modules %s; peers %s" % (
        sys.version.split()[0], sys.executable, sys._is_gil_enabled(), THREADS, ITERATIONS,
        ", ".join([capi.__name__] + [m.__name__ for m in casters]),
        ", ".join("%s %s" % (k, v.__version__) for k, v in peers.items()) or "none"))
    sys.stdout.flush()
    barrier = threading.Barrier(THREADS, action=next_round)
    start = time.monotonic()
    threads = [threading.Thread(target=worker, args=(t, barrier)) for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    passed.count = 0
    if not failures and one_capsule[1] != 1:
        record("one capsule, every thread", "the last round: taken %d times" % one_capsule[1])
    take_exports(1 << 30)  # what is left, on the main thread
    totals.append(passed.count)
    elapsed = time.monotonic() - start
    if sys._is_gil_enabled():
        record("GIL", "the GIL was turned on while the threads ran")
    total_failed = sum(failures.values())
    print("%d checks passed, %d failed, %.1f s" % (sum(totals), total_failed, elapsed))
    if total_failed:
        threads_failed = sorted(failures.items(), key=lambda kv: -kv[1])
        print("failures by path:")
        for path, count in threads_failed[:25]:
            print("  %6d  %s" % (count, path))
        print("first failures:")
        for line in first_failures:
            print("  " + line)
        sys.exit(1)
    print("ok")


main()
