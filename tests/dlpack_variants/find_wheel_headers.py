# SPDX-License-Identifier: Apache-2.0
"""Lists the dlpack.h copies inside the PyPI wheels this interpreter can import.

Prints "found <module> <path>" for each one present and "missing <module> <pip name>" for
each absent, for tests/dlpack_variants/dlpack_variants.cmake. Nothing is imported: find_spec
on a top-level package only locates it, so this stays fast even with torch installed.
"""
import importlib.util
import os

# (module, pip name, the header's path inside the package), each checked against a wheel.
WHEELS = (
    ("torch", "torch", "include/ATen/dlpack.h"),
    ("tvm_ffi", "apache-tvm-ffi", "include/dlpack/dlpack.h"),
)

for module, pip_name, relative in WHEELS:
    spec = importlib.util.find_spec(module)
    header = None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        candidate = os.path.join(folder, *relative.split("/"))
        if os.path.isfile(candidate):
            header = candidate
            break
    if header:
        print("found", module, header)
    else:
        print("missing", module, pip_name)
