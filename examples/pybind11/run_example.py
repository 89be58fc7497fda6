# SPDX-License-Identifier: Apache-2.0
"""Drives a binding example from one peer: `run_example.py <module> numpy|torch`. The nanobind
example is driven by this same script. A peer that is absent reports itself skipped."""
import importlib
import os
import sys
import sysconfig

module_name, peer = sys.argv[1], sys.argv[2]
try:
    lib = importlib.import_module(peer)
except ImportError as e:
    print("DLPACKPP_TEST_SKIPPED: %s is not importable by %s (%s)" % (peer, sys.executable, e))
    sys.exit(0)
ex = importlib.import_module(module_name)
# Both examples declare they run without the GIL: on a free-threaded CPython it stays off.
if sysconfig.get_config_var("Py_GIL_DISABLED") and os.environ.get("PYTHON_GIL") != "1":
    assert not sys._is_gil_enabled(), "importing %s turned the GIL on" % module_name
make = {"numpy": lambda n, t: lib.ones((n, n), dtype=t),
        "torch": lambda n, t: lib.ones((n, n), dtype=getattr(lib, t))}[peer]

x, y = make(2, "float32"), make(2, "float64")
ex.scale_(x, 3.0)  # float32 overload, in place
ex.scale_(y, 0.5)  # float64 overload
assert x.tolist() == [[3.0, 3.0], [3.0, 3.0]] and y.tolist() == [[0.5, 0.5], [0.5, 0.5]]
assert ex.total(x) == 12.0 and ex.total(x[:, 1]) == 6.0
ones = lib.from_dlpack(ex.ones(4))  # dlpackpp.Tensor -> the peer, zero-copy
assert ones.tolist() == [1.0, 1.0, 1.0, 1.0]
try:
    ex.scale_(make(2, "int32"), 2.0)
    raise AssertionError("an int32 tensor matched a float overload")
except TypeError as e:
    print(str(e).splitlines()[0])
print("%s from %s %s: ok" % (module_name, peer, lib.__version__))
