# SPDX-License-Identifier: Apache-2.0
"""Builds scale_op.cpp with torch.utils.cpp_extension (as PyTorch kernel authors do) and runs its
ops: `build_and_run.py [build folder]` (default: dlpackpp_torch_example in the temp folder).
Needs PyTorch 2.x from PyPI (its wheel ships the C++ headers and pybind11), a C++ compiler and
ninja; otherwise it reports itself skipped."""
import os
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
try:
    import torch
    from torch.utils import cpp_extension
except ImportError as e:
    print("DLPACKPP_TEST_SKIPPED: PyTorch is not importable by %s (%s)" % (sys.executable, e))
    sys.exit(0)
if int(torch.__version__.split(".")[0]) < 2 or not cpp_extension.include_paths():
    print("DLPACKPP_TEST_SKIPPED: PyTorch %s has no usable C++ extension headers; the example "
          "needs the PyPI wheel (2.x)" % torch.__version__)
    sys.exit(0)
if not cpp_extension.is_ninja_available():
    print("DLPACKPP_TEST_SKIPPED: ninja is not installed (apt-get install ninja-build)")
    sys.exit(0)

build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                        os.path.join(tempfile.gettempdir(), "dlpackpp_torch_example"))
os.makedirs(build, exist_ok=True)
ext = cpp_extension.load(name="dlpackpp_torch_example", sources=[os.path.join(here, "scale_op.cpp")],
                         extra_include_paths=[os.path.join(here, "..", "..", "include")],
                         extra_cflags=["-O2"], build_directory=build)  # torch picks -std

x = torch.ones(2, 3)
ext.scale_(x, 2.0)
assert x.tolist() == [[2.0] * 3] * 2, x
assert ext.row_sums(x).tolist() == [6.0, 6.0]
assert ext.row_sums(x.t()).tolist() == [4.0, 4.0, 4.0]  # strided: any layout
r = torch.from_dlpack(ext.ramp(4))
assert r.tolist() == [0.0, 1.0, 2.0, 3.0]
try:
    ext.scale_(torch.ones(2, 3, dtype=torch.float64), 2.0)
    raise AssertionError("a float64 tensor matched the float32 op")
except TypeError as e:
    print(str(e).splitlines()[0])
print("torch %s extension with dlpackpp arguments: ok" % torch.__version__)
