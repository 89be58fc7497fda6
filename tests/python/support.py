# SPDX-License-Identifier: Apache-2.0
"""Shared by the Python test scripts: the module under test and the skip convention."""
import importlib
import os
import sys
import unittest

#: The extension built from test_module.cpp (a variant named by DLPACKPP_TEST_MODULE).
MODULE_NAME = os.environ.get("DLPACKPP_TEST_MODULE", "dlpackpp_test")
m = importlib.import_module(MODULE_NAME)
#: The variant: "" (full API, DLPack 1.3), "_limited" or "_legacy" (0.x dlpack.h).
VARIANT = MODULE_NAME[len("dlpackpp_test"):]
LEGACY_HEADER = VARIANT == "_legacy"


def skip_script(why):
    """Skips the whole script: CTest reads the marker through SKIP_REGULAR_EXPRESSION."""
    print("DLPACKPP_TEST_SKIPPED: " + why)
    sys.stdout.flush()
    sys.exit(0)


def require(name, why):
    """The module `name`, or the script is skipped saying `why`."""
    try:
        return importlib.import_module(name)
    except ImportError as e:  # pragma: no cover - depends on the machine
        skip_script("%s is not importable (%s): %s" % (name, e, why))


def main():
    """unittest.main that fails the script when no test ran at all."""
    program = unittest.main(exit=False, verbosity=2)
    result = program.result
    if result.testsRun == 0:
        print("error: no test ran")
        sys.exit(1)
    sys.exit(0 if result.wasSuccessful() else 1)
