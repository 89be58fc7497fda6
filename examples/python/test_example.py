# SPDX-License-Identifier: Apache-2.0
"""Drives the dlpackpp_example extension from one peer: `test_example.py numpy|torch`.

Values are compared with NumPy's own. A peer that cannot be imported makes the test report
itself skipped (the CTest SKIP_REGULAR_EXPRESSION), never pass silently.
"""
import os
import sys
import sysconfig
import unittest

PEER = sys.argv.pop(1) if len(sys.argv) > 1 else "numpy"


def skip(why):
    print("DLPACKPP_TEST_SKIPPED: " + why)
    sys.exit(0)


try:
    import numpy as np
except ImportError as e:
    skip("NumPy is not importable by %s (%s); apt-get install python3-numpy" % (sys.executable, e))
if PEER == "torch":
    try:
        import torch
    except ImportError as e:
        skip("PyTorch is not importable by %s (%s); apt-get install python3-torch" % (sys.executable, e))

import dlpackpp_example as ex


def layouts(dtype):
    """Arrays of every layout the walk must handle, with NumPy's float64 sum as the reference."""
    base = np.arange(60, dtype=dtype).reshape(3, 4, 5) / 7
    return {
        "contiguous": base,
        "transposed": base.transpose(2, 0, 1),
        "stepped": base[::2, 1:, ::-2],
        "fortran": np.asfortranarray(base),
        "stride 0": np.lib.stride_tricks.as_strided(base[0, 0], (3, 5), (0, base.itemsize)),
        "0-d": np.array(2.5, dtype=dtype),
        "zero-size": np.zeros((3, 0, 2), dtype=dtype),
        "1-d": np.linspace(-1, 1, 11).astype(dtype),
    }


class FromNumPy(unittest.TestCase):
    def test_sum_any_layout(self):
        for dtype in (np.float32, np.float64):
            for name, a in layouts(dtype).items():
                with self.subTest(dtype=dtype.__name__, layout=name):
                    expected = float(np.sum(a, dtype=np.float64))
                    self.assertAlmostEqual(ex.sum(a), expected, places=9)
                    self.assertAlmostEqual(ex.sum_borrowed(a), expected, places=9)

    def test_scale_in_place(self):
        a = np.arange(24, dtype=np.float32).reshape(4, 6)
        view = a[1:, ::2]
        expected = a.copy()
        expected[1:, ::2] *= 3
        self.assertIsNone(ex.scale_(view, 3.0))
        np.testing.assert_array_equal(a, expected)

    def test_scale_refuses_read_only(self):
        a = np.arange(4.0)
        a.setflags(write=False)
        # NumPy 1.x refuses to export it at all, NumPy 2 exports it flagged READ_ONLY and
        # dlpackpp refuses the write: a BufferError either way, the array untouched.
        with self.assertRaises(BufferError):
            ex.scale_(a, 2.0)
        np.testing.assert_array_equal(a, np.arange(4.0))

    def test_wrong_dtype_is_type_error(self):
        with self.assertRaises(TypeError):
            ex.sum(np.arange(4, dtype=np.int32))
        with self.assertRaises(TypeError):
            ex.scale_(np.arange(4, dtype=np.int64), 2.0)

    def test_not_a_tensor(self):
        with self.assertRaises(Exception):
            ex.sum([1.0, 2.0])

    def test_arange_into_numpy(self):
        t = ex.arange(6)
        self.assertEqual(type(t).__name__, "Tensor")
        a = np.from_dlpack(t)
        del t  # the C++ buffer lives as long as `a`
        np.testing.assert_array_equal(a, np.arange(6.0))

    def test_arange_back_into_cpp(self):
        self.assertEqual(ex.sum(ex.arange(100)), 4950.0)
        self.assertEqual(ex.sum_borrowed(ex.arange(100)), 4950.0)
        self.assertEqual(ex.sum(ex.arange(0)), 0.0)
        with self.assertRaises(ValueError):
            ex.arange(-1)

    def test_gil_stays_off(self):
        # The module declares Py_mod_gil = Py_MOD_GIL_NOT_USED: on a free-threaded CPython
        # importing it leaves the GIL off (unless PYTHON_GIL=1 turned it on from the start).
        if not sysconfig.get_config_var("Py_GIL_DISABLED"):
            self.skipTest("a GIL build")
        if os.environ.get("PYTHON_GIL") != "1":
            self.assertFalse(sys._is_gil_enabled())

    def test_read_only_cpp_tensor_refused_by_scale(self):
        t = ex.arange(3, read_only=True)
        with self.assertRaises(BufferError):
            ex.scale_(t, 2.0)
        self.assertEqual(ex.sum(ex.arange(3, read_only=True)), 3.0)  # reading is fine


class FromTorch(unittest.TestCase):
    def test_sum_any_layout(self):
        base = torch.arange(60, dtype=torch.float64).reshape(3, 4, 5) / 7
        for dtype in (torch.float32, torch.float64):
            b = base.to(dtype)
            cases = {
                "contiguous": b,
                "transposed": b.permute(2, 0, 1),
                "sliced": b[::2, 1:, ::3],
                "expanded": b[0, 0].expand(3, 5),
                "0-d": torch.tensor(2.5, dtype=dtype),
                "zero-size": torch.zeros(3, 0, 2, dtype=dtype),
            }
            for name, t in cases.items():
                with self.subTest(dtype=str(dtype), layout=name):
                    expected = float(np.sum(t.numpy(), dtype=np.float64))
                    self.assertAlmostEqual(ex.sum(t), expected, places=9)
                    self.assertAlmostEqual(ex.sum_borrowed(t), expected, places=9)

    def test_scale_in_place(self):
        t = torch.arange(12, dtype=torch.float64).reshape(3, 4)
        expected = t.numpy().copy()
        expected[:, 1::2] *= -0.5
        ex.scale_(t[:, 1::2], -0.5)
        np.testing.assert_array_equal(t.numpy(), expected)

    def test_wrong_dtype_is_type_error(self):
        with self.assertRaises(TypeError):
            ex.sum(torch.arange(4))

    def test_arange_into_torch(self):
        from torch.utils.dlpack import from_dlpack
        t = from_dlpack(ex.arange(5))
        np.testing.assert_array_equal(t.numpy(), np.arange(5.0))
        t[0] = 40.0  # PyTorch shares the C++ buffer, and writes into it
        self.assertEqual(ex.sum(t), 50.0)  # and back into C++ again


if __name__ == "__main__":
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(FromTorch if PEER == "torch" else FromNumPy)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)
