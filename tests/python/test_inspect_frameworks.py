# SPDX-License-Identifier: Apache-2.0
"""dlpackpp.inspect against real producers: NumPy (1.x legacy, 2.x versioned), PyTorch (1.13
legacy, 2.x versioned with its exchange table), JAX where installed, and the conformance kit's
seeded broken producers (tests/conformance/_reference.py, whose probe is compiled on first use).
Each framework that does not import is skipped, saying so; none is faked."""

import importlib
import os
import sys
import unittest

from inspect_capsules import HERE, main

import dlpackpp
from dlpackpp.conformance import _fields as F


def framework(name):
    """The module, or the test is skipped saying why it does not import."""
    try:
        return importlib.import_module(name)
    except Exception as e:  # noqa: BLE001 - a broken install is a skip too, with its reason
        raise unittest.SkipTest("%s does not import here (%s: %s)" % (name, type(e).__name__, e))


def version_of(module):
    return tuple(int(p) for p in module.__version__.split("+")[0].split(".")[:2])


def bool_dtype(test, x):
    """inspect(x) of a bool array: kDLBool 8 bits, or the producer's own refusal re-raised
    (NumPy 1.24 and PyTorch 1.13 export no bool)."""
    try:
        x.__dlpack__()
    except Exception as e:  # noqa: BLE001 - the refusal inspect must pass on
        with test.assertRaises(type(e)):
            dlpackpp.inspect(x)
        return
    test.assertEqual(dlpackpp.inspect(x)["dtype"], ("bool", 6, 8, 1))


class NumPy(unittest.TestCase):
    def setUp(self):
        self.np = framework("numpy")

    def test_view(self):
        np = self.np
        base = np.arange(1, 25, dtype=np.float32).reshape(4, 6)
        a = base[1::2, 4:0:-2]  # sliced, negative step: a view at an offset
        refs = sys.getrefcount(base)
        r = dlpackpp.inspect(a)
        self.assertEqual(sys.getrefcount(base), refs)  # NumPy's deleter ran, once
        self.assertEqual(r["producer"], "numpy.ndarray")
        self.assertEqual(r["dtype"], ("float32", 2, 32, 1))
        self.assertEqual(r["shape"], a.shape)
        self.assertEqual(r["strides"], tuple(s // a.itemsize for s in a.strides))
        self.assertEqual(r["data"] + r["byte_offset"], a.__array_interface__["data"][0])
        self.assertEqual((r["device"], r["dlpack_device"], r["deleter"]), ((1, 0), (1, 0), True))
        self.assertEqual((r["exchange_api"], r["problems"]), (None, []))
        if r["capsule"] == "dltensor_versioned":  # NumPy 2.1 and later take max_version
            self.assertEqual((r["version"][0], r["flags"]), (1, ()))
        else:
            self.assertEqual((r["capsule"], r["version"], r["flags"]), ("dltensor", None, None))

    def test_read_only(self):
        a = self.np.arange(6.0)
        a.flags.writeable = False
        try:
            try:
                expected = a.__dlpack__(max_version=(1, 3))
            except TypeError:
                expected = a.__dlpack__()
        except BufferError as e:  # NumPy 1.x cannot say READ_ONLY: it refuses
            with self.assertRaises(BufferError) as caught:
                dlpackpp.inspect(a)
            self.assertEqual(str(caught.exception), str(e))
            return
        del expected
        r = dlpackpp.inspect(a)
        self.assertIn("READ_ONLY", r["flags"])  # only a versioned capsule can say it

    def test_size_zero_and_zero_d(self):
        np = self.np
        r = dlpackpp.inspect(np.zeros((3, 0), dtype=np.int16))
        self.assertEqual((r["shape"], r["dtype"].name, r["problems"]), ((3, 0), "int16", []))
        r = dlpackpp.inspect(np.array(2.5))
        self.assertEqual((r["ndim"], r["shape"], r["problems"]), (0, (), []))
        bool_dtype(self, np.array([True]))


class Torch(unittest.TestCase):
    def setUp(self):
        self.torch = framework("torch")

    def test_transposed_slice(self):
        torch = self.torch
        t = torch.arange(12, dtype=torch.float64).reshape(3, 4).t()[1:]
        r = dlpackpp.inspect(t)
        self.assertEqual(r["producer"], "torch.Tensor")
        self.assertEqual(r["dtype"], ("float64", 2, 64, 1))
        self.assertEqual((r["shape"], r["strides"]), (tuple(t.shape), tuple(t.stride())))
        self.assertEqual(r["data"] + r["byte_offset"], t.data_ptr())
        self.assertEqual((r["device"], r["dlpack_device"], r["problems"]), ((1, 0), (1, 0), []))

    def test_exchange_table(self):
        torch = self.torch
        r = dlpackpp.inspect(torch.ones(2, 3))
        table = getattr(torch.Tensor, "__dlpack_c_exchange_api__", None)
        if table is None:  # PyTorch before its DLPack 1.3 exchange table (1.13 has none)
            self.assertEqual((r["exchange_api"], r["exchange_import"]), (None, None))
            if version_of(torch) < (2, 4):  # no max_version yet: the legacy protocol
                self.assertEqual(r["capsule"], "dltensor")
            return
        self.assertEqual(r["exchange_api"][0], 1)
        self.assertEqual((r["capsule"], r["version"][0], r["problems"]),
                         ("dltensor_versioned", 1, []))
        # Through the table: the same tensor as __dlpack__, a transposed slice included.
        t = torch.arange(12.0).reshape(3, 4).t()[1:]
        r = dlpackpp.inspect(t)
        self.assertTrue(r["exchange_import"]["same"], r)
        self.assertEqual(r["exchange_import"]["strides"], tuple(t.stride()))
        self.assertRegex(str(r), r"exchange_api +%d\.%d" % r["exchange_api"])

    def test_capsule_torch_consumed(self):
        torch = self.torch
        from torch.utils.dlpack import from_dlpack
        t = torch.arange(4.0)
        capsules = [t.__dlpack__()]
        try:
            capsules.append(t.__dlpack__(max_version=(1, 3)))
        except TypeError:  # PyTorch 1.13: legacy capsules only
            pass
        for cap in capsules:
            r = dlpackpp.inspect(cap)  # read, not consumed: PyTorch can still take it
            self.assertEqual((r["producer"], r["shape"], r["problems"]), (None, (4,), []))
            name = r["capsule"]
            y = from_dlpack(cap)
            self.assertEqual(y.tolist(), [0.0, 1.0, 2.0, 3.0])
            r = dlpackpp.inspect(cap)
            self.assertEqual((r["capsule"], r["shape"]), ("used_" + name, None))
            self.assertEqual(r["problems"], [F.consumed("used_" + name)])

    def test_bool_and_size_zero(self):
        torch = self.torch
        bool_dtype(self, torch.zeros(2, dtype=torch.bool))
        r = dlpackpp.inspect(torch.zeros(0, 5))
        self.assertEqual((r["shape"], r["problems"]), ((0, 5), []))


class Jax(unittest.TestCase):
    def test_array(self):
        jnp = framework("jax.numpy")
        x = jnp.arange(6, dtype=jnp.float32).reshape(2, 3)
        r = dlpackpp.inspect(x)
        self.assertEqual((r["shape"], r["dtype"].name, r["device"]), ((2, 3), "float32", (1, 0)))
        self.assertEqual(r["problems"], [])


class BrokenProducers(unittest.TestCase):
    """The kit's seeded producers: the conforming one, and the faults the fields show."""

    def setUp(self):
        self.np = framework("numpy")
        sys.path.insert(0, os.path.join(HERE, "..", "conformance"))
        from dlpackpp.conformance._build import UsageError
        try:
            self.reference = importlib.import_module("_reference")
            self.reference.adapter()
        except UsageError as e:  # no compiler or no Python.h: the kit's probe cannot be built
            raise unittest.SkipTest("the kit's probe cannot be built: %s" % e)

    def inspect(self, fault, read_only=False):
        a = self.np.arange(12, dtype=self.np.float32).reshape(3, 4)
        adapter = self.reference.adapter(fault)
        return a, dlpackpp.inspect(adapter["read_only" if read_only else "from_numpy"](a))

    def test_conforming(self):
        a, r = self.inspect(None)
        self.assertEqual((r["problems"], r["exchange_api"], r["strides"]), ([], (1, 3), (4, 1)))
        self.assertTrue(r["exchange_import"]["same"])
        _, r = self.inspect(None, read_only=True)
        self.assertEqual(r["flags"], ("READ_ONLY",))
        _, r = self.inspect("P6", read_only=True)  # read-only memory without the flag
        self.assertEqual(r["flags"], ())

    def test_device_disagrees(self):
        _, r = self.inspect("P10")
        self.assertEqual(r["problems"], [F.device_differs((1, 7), (1, 0))])

    def test_exchange_table_faults(self):
        _, r = self.inspect("X1")
        self.assertEqual((r["exchange_api"], r["problems"]),
                         (None, [F.table_name("dlpack_exchange_api_v0")]))
        _, r = self.inspect("X3")  # the table's import shrinks the first extent
        self.assertEqual(r["problems"], [F.import_differs("shape", (2, 4), (3, 4))])
        _, r = self.inspect("X2")
        self.assertEqual(r["exchange_api"][0], 2)
        self.assertEqual(r["problems"], [F.table_major([r["exchange_api"]])])

    def test_faults_the_fields_show(self):
        a, r = self.inspect("P3")  # strides in bytes
        self.assertEqual(r["strides"], a.strides)
        a, r = self.inspect("P4")  # byte_offset one element past element 0
        self.assertEqual(r["data"] + r["byte_offset"], a.__array_interface__["data"][0] + 4)
        a, r = self.inspect("P5")  # bool as uint8
        bools = self.reference.adapter("P5")["from_numpy"](self.np.array([True, False]))
        self.assertEqual(dlpackpp.inspect(bools)["dtype"], ("uint8", 1, 8, 1))


if __name__ == "__main__":
    main()
