# SPDX-License-Identifier: Apache-2.0
"""dlpackpp.inspect on capsules built field by field (inspect_capsules.py): names, versions,
NULL strides and data, wild fields of another major, producers that raise, and the deleter
run exactly once for what __dlpack__ hands over. Needs no framework and no compiler."""

import copy
import gc
import json
import pickle
import unittest

from inspect_capsules import WILD, Capsule, Producer, main, table_producer

import dlpackpp
from dlpackpp.conformance import _fields as F

KEYS = ("producer", "capsule", "version", "flags", "dtype", "shape", "strides", "byte_offset",
        "data", "alignment", "device", "dlpack_device", "deleter", "exchange_api", "problems")


class Fields(unittest.TestCase):
    def test_versioned_producer(self):
        p = Producer(shape=(2, 3), strides=(1, 2), data=0x1008, byte_offset=8, flags=1,
                     dtype=(6, 8, 1))
        r = dlpackpp.inspect(p)
        self.assertIsInstance(r, dict)
        self.assertTrue(set(KEYS) <= set(r))
        self.assertEqual(p.calls, [(1, 3)])  # asked as a 1.x consumer asks
        self.assertTrue(r["producer"].endswith("Producer"))
        self.assertEqual((r["capsule"], r["version"], r["flags"]),
                         ("dltensor_versioned", (1, 3), ("READ_ONLY",)))
        self.assertEqual(r["dtype"], ("bool", 6, 8, 1))
        self.assertEqual(r["dtype"].bits, 8)
        self.assertEqual((r["shape"], r["strides"], r["byte_offset"]), ((2, 3), (1, 2), 8))
        self.assertEqual((r["data"], r["alignment"]), (0x1008, 16))  # 0x1010
        self.assertEqual((r["device"], r["dlpack_device"]), ((1, 0), (1, 0)))
        self.assertEqual((r["deleter"], r["exchange_api"], r["problems"]), (True, None, []))
        text = str(r)
        for key in KEYS:
            self.assertIn(key, text)
        self.assertIn("READ_ONLY", text)
        self.assertIn("kDLCPU", text)
        # A plain record: it copies, pickles and serializes like the dict it is.
        self.assertEqual(pickle.loads(pickle.dumps(r)), r)
        self.assertEqual(copy.deepcopy(r)["dtype"].name, "bool")
        self.assertEqual(json.loads(json.dumps(r))["dtype"], ["bool", 6, 8, 1])

    def test_legacy_fallback_on_type_error(self):
        p = Producer(legacy_only=True)
        r = dlpackpp.inspect(p)
        self.assertEqual(p.calls, [(1, 3), None])
        self.assertEqual((r["capsule"], r["version"], r["flags"]), ("dltensor", None, None))
        self.assertEqual(r["problems"], [])
        self.assertEqual(p.deleted(), 1)

    def test_alignment_caps_at_256(self):
        r = dlpackpp.inspect(Producer(data=0x10000))
        self.assertEqual(r["alignment"], 256)

    def test_legacy_capsule_for_max_version(self):
        # Allowed to a producer without DLPack 1.x (JAX 0.10 does it): no problem.
        r = dlpackpp.inspect(Producer(version=None))
        self.assertEqual((r["capsule"], r["problems"]), ("dltensor", []))


class Lifetime(unittest.TestCase):
    def test_deleter_once_versioned_and_legacy(self):
        for legacy in (False, True):
            p = Producer(legacy_only=legacy)
            dlpackpp.inspect(p)
            # Released before inspect returned: no collection needed.
            self.assertEqual((p.deleted(), p.made[0].destroyed), (1, 1))
            gc.collect()
            self.assertEqual(p.deleted(), 1)

    def test_bare_capsule_is_read_not_consumed(self):
        c = Capsule(shape=(4,))
        cap = c.capsule()
        r = dlpackpp.inspect(cap)
        self.assertEqual((r["producer"], r["dlpack_device"], r["shape"]), (None, None, (4,)))
        self.assertEqual((c.deleted, c.destroyed), (0, 0))
        r = dlpackpp.inspect(cap)  # still there, still a tensor capsule
        self.assertEqual(r["capsule"], "dltensor_versioned")
        del cap
        self.assertEqual((c.deleted, c.destroyed), (1, 1))

    def test_producer_exception_unchanged(self):
        for error in (ValueError("boom"), BufferError("refused"), KeyboardInterrupt()):
            p = Producer(raises=error)
            with self.assertRaises(BaseException) as caught:
                dlpackpp.inspect(p)
            self.assertIs(caught.exception, error)
            self.assertIsNone(caught.exception.__context__)
            self.assertEqual(p.made, [])

    def test_type_error_twice_is_the_second(self):
        class Refuses:
            def __init__(self):
                self.errors = []

            def __dlpack__(self, **kwargs):
                self.errors.append(TypeError("call %d" % len(self.errors)))
                raise self.errors[-1]

        x = Refuses()
        with self.assertRaises(TypeError) as caught:
            dlpackpp.inspect(x)
        self.assertIs(caught.exception, x.errors[1])
        self.assertIsNone(caught.exception.__context__)

    def test_device_exception_before_any_export(self):
        class Broken(Producer):
            def __dlpack_device__(self):
                raise RuntimeError("no device")

        p = Broken()
        with self.assertRaisesRegex(RuntimeError, "no device"):
            dlpackpp.inspect(p)
        self.assertEqual(p.made, [])

    def test_not_dlpack(self):
        with self.assertRaisesRegex(TypeError, "no __dlpack__"):
            dlpackpp.inspect([1, 2])


class Names(unittest.TestCase):
    def assert_unread(self, r):
        for key in ("version", "flags", "dtype", "shape", "strides", "data", "device",
                    "deleter"):
            self.assertIsNone(r[key], key)

    def test_wrong_names(self):
        for name in (b"dltensor_v2", b"DLTENSOR", b"something_else"):
            c = Capsule(name=name, version=None, data=WILD, shape=None, ndim=5)
            r = dlpackpp.inspect(c.capsule())
            self.assertEqual(r["capsule"], name.decode())
            self.assert_unread(r)
            self.assertEqual(r["problems"], [F.capsule_name(name.decode())])
            self.assertIn(name.decode(), str(r))
            self.assertNotIn("legacy", str(r))
            self.assertNotIn("NULL", str(r))

    def test_wrong_name_from_a_producer(self):
        p = Producer(name=b"tensor")
        r = dlpackpp.inspect(p)
        self.assert_unread(r)
        self.assertEqual(r["problems"], [F.capsule_name("tensor")])
        self.assertEqual(p.made[0].destroyed, 1)  # released all the same

    def test_consumed(self):
        for name, version in ((b"used_dltensor", None), (b"used_dltensor_versioned", (1, 3))):
            c = Capsule(name=name, version=version, poison=True)
            r = dlpackpp.inspect(c.capsule())
            self.assert_unread(r)
            self.assertEqual(r["problems"], [F.consumed(name.decode())])
            self.assertEqual(c.deleted, 0)  # a consumed capsule's deleter is the consumer's


class Versions(unittest.TestCase):
    def test_major_2_reads_nothing_past_the_version(self):
        c = Capsule(version=(2, 0), poison=True)  # a read past the version crashes
        r = dlpackpp.inspect(c.capsule())
        self.assertEqual((r["capsule"], r["version"]), ("dltensor_versioned", (2, 0)))
        for key in ("flags", "dtype", "shape", "strides", "data", "device", "deleter"):
            self.assertIsNone(r[key], key)
        self.assertEqual(r["problems"], [F.unknown_major((2, 0))])

    def test_major_2_from_a_producer(self):
        p = Producer(version=(2, 1), poison=True)
        r = dlpackpp.inspect(p)
        self.assertEqual(r["problems"], [F.major_above((1, 3), "dltensor_versioned", (2, 1)),
                                         F.unknown_major((2, 1))])
        self.assertEqual(p.deleted(), 1)


class Layouts(unittest.TestCase):
    def test_null_strides(self):
        legacy = dlpackpp.inspect(Capsule(version=None, strides=None).capsule())
        self.assertEqual((legacy["strides"], legacy["problems"]), (None, []))
        old = dlpackpp.inspect(Capsule(version=(1, 1), strides=None).capsule())
        self.assertEqual((old["strides"], old["problems"]), (None, []))
        new = dlpackpp.inspect(Capsule(version=(1, 3), strides=None).capsule())
        self.assertEqual(new["problems"], [F.null_strides((1, 3))])
        self.assertIn("NULL", str(new))

    def test_zero_d_with_null_shape_and_strides(self):
        r = dlpackpp.inspect(Capsule(shape=None, strides=None, ndim=0).capsule())
        self.assertEqual((r["shape"], r["strides"], r["problems"]), ((), None, []))

    def test_size_zero_with_null_data(self):
        r = dlpackpp.inspect(Capsule(shape=(0, 3), data=0).capsule())
        self.assertEqual((r["shape"], r["data"], r["alignment"], r["problems"]),
                         ((0, 3), 0, 256, []))
        self.assertIn("NULL", str(r))

    def test_null_data_with_elements(self):
        r = dlpackpp.inspect(Capsule(shape=(2, 3), data=0).capsule())
        self.assertEqual(r["problems"], [F.null_data(6)])

    def test_null_shape_and_wild_ndim(self):
        r = dlpackpp.inspect(Capsule(shape=None, strides=(3, 1), ndim=2).capsule())
        self.assertEqual(r["problems"], [F.null_shape(2)])
        r = dlpackpp.inspect(Capsule(ndim=-1).capsule())
        self.assertEqual((r["shape"], r["problems"]), (None, [F.bad_ndim(-1)]))

    def test_dtype_device_and_flag_rules(self):
        cases = [({"dtype": (200, 32, 1)}, F.unknown_code(200)),
                 ({"dtype": (6, 16, 1)}, F.bad_bits("bool", 16, 8)),
                 ({"dtype": (2, 32, 0)}, F.zero_field("lanes")),
                 ({"device": (99, 0)}, F.unknown_device(99)),
                 ({"flags": 8}, F.unknown_flags(8)),
                 ({"flags": 4}, F.padded_not_subbyte(32)),
                 ({"shape": (2, -1)}, F.negative_extent((2, -1)))]
        for fields, problem in cases:
            self.assertEqual(dlpackpp.inspect(Capsule(**fields).capsule())["problems"],
                             [problem], fields)
        # A newer minor may define more codes: nothing is called unknown there.
        newer = Capsule(dtype=(200, 32, 1), device=(99, 0), version=(1, 9))
        self.assertEqual(dlpackpp.inspect(newer.capsule())["problems"], [])
        self.assertEqual(dlpackpp.inspect(Capsule(dtype=(2, 32, 4)).capsule())["dtype"].name,
                         "float32x4")

    def test_dlpack_device(self):
        r = dlpackpp.inspect(Producer(device=(2, 1)))
        self.assertEqual(r["problems"], [F.device_differs((2, 1), (1, 0))])
        r = dlpackpp.inspect(Producer(device="cpu"))
        self.assertEqual((r["dlpack_device"], r["problems"]), ("cpu", [F.device_not_pair("cpu")]))


class ExchangeTable(unittest.TestCase):
    def test_integer_and_misnamed_tables(self):
        class Integer(Producer):
            __dlpack_c_exchange_api__ = 1234

        r = dlpackpp.inspect(Integer())
        self.assertEqual((r["exchange_api"], r["problems"]), (None, [F.integer_table()]))

        class Misnamed(Producer):
            __dlpack_c_exchange_api__ = Capsule(name=b"dlpack_exchange_api_v0").capsule()

        r = dlpackpp.inspect(Misnamed())
        self.assertEqual((r["exchange_api"], r["problems"]),
                         (None, [F.table_name("dlpack_exchange_api_v0")]))
        del Misnamed.__dlpack_c_exchange_api__

    def test_import_through_the_table(self):
        kind = table_producer(shape=(2, 3))
        p = kind(shape=(2, 3))
        r = dlpackpp.inspect(p)
        self.assertEqual((r["exchange_api"], r["problems"]), ((1, 3), []))
        self.assertEqual(r["exchange_import"]["shape"], (2, 3))
        self.assertTrue(r["exchange_import"]["same"])
        self.assertIn("same tensor as __dlpack__", str(r))
        # Each route's tensor released exactly once, before inspect returned.
        self.assertEqual((p.deleted(), [c.deleted for c in kind.imports]), (1, [1]))

    def test_table_import_that_differs_or_fails(self):
        p = table_producer(shape=(1, 3), data=0x2000)(shape=(2, 3))
        r = dlpackpp.inspect(p)
        self.assertFalse(r["exchange_import"]["same"])
        self.assertEqual(r["problems"], [F.import_differs("shape", (1, 3), (2, 3))])
        p = table_producer(data=0x2000)()
        self.assertEqual(dlpackpp.inspect(p)["problems"], [F.import_starts(0x2000, 0x1000)])
        r = dlpackpp.inspect(table_producer(rc=-1)())
        self.assertEqual((r["exchange_import"], r["problems"]),
                         (None, [F.table_import_failed(-1)]))


if __name__ == "__main__":
    main()
