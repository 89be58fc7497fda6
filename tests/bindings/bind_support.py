# SPDX-License-Identifier: Apache-2.0
"""What the binding tests share: the module under test (DLPACKPP_BIND_MODULE, bind_module.cpp
built with pybind11 or nanobind; the script is skipped when it cannot be imported), the peers
this interpreter has, and the producers the tests hand it."""
import importlib
import os
import sys
import unittest

MODULE_NAME = os.environ.get("DLPACKPP_BIND_MODULE", "dlpackpp_bind_pybind11_pypi")
try:
    m = importlib.import_module(MODULE_NAME)
except ImportError as e:  # pragma: no cover - depends on the build
    print("DLPACKPP_TEST_SKIPPED: %s is not importable: %s" % (MODULE_NAME, e))
    sys.exit(0)
NANOBIND = "nanobind" in MODULE_NAME


def optional(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


np = optional("numpy")
torch = optional("torch")
jax = optional("jax")
jnp = optional("jax.numpy")
NUMPY2 = np is not None and int(np.__version__.split(".")[0]) >= 2
TORCH_TABLE = torch is not None and hasattr(torch.Tensor, "__dlpack_c_exchange_api__")
CUDA = torch is not None and torch.cuda.is_available()


class Wrapper:
    """Speaks DLPack only through __dlpack__ (no exchange table): imports own what they get."""

    def __init__(self, inner):
        self.inner = inner

    def __dlpack__(self, **kwargs):
        return self.inner.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.inner.__dlpack_device__()


class OneCapsule:
    """The usual adapter of an old to_dlpack() capsule: __dlpack__ hands out the same capsule
    every time it is asked."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule


class Raising:
    """A producer whose __dlpack__ raises `exc`, counting its calls."""

    def __init__(self, exc):
        self.exc = exc
        self.calls = 0

    def __dlpack__(self, **kwargs):
        self.calls += 1
        raise self.exc


class Reentrant:
    """A producer whose __dlpack__ calls the bound function on the next level down; the bottom
    raises a new exception like `bottom` (a raised instance would carry its old traceback).
    Every level's call is appended to `calls`."""

    def __init__(self, depth, bottom, calls):
        self.depth, self.bottom, self.calls = depth, bottom, calls

    def __dlpack__(self, **kwargs):
        self.calls.append(self.depth)
        if self.depth:
            m.numel(Reentrant(self.depth - 1, self.bottom, self.calls))
        raise type(self.bottom)(*self.bottom.args)


def run_tests():
    """Runs the calling script's tests; no test run is a failure, not a pass."""
    program = unittest.main(module="__main__", exit=False, verbosity=2)
    if program.result.testsRun == 0:
        print("error: no test ran")
        sys.exit(1)
    sys.exit(0 if program.result.wasSuccessful() else 1)

