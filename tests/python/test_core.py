# SPDX-License-Identifier: Apache-2.0
"""Capsules, set_python_error and the dlpackpp.Tensor type, with no third-party peer."""
import array
import gc
import struct
import threading
import unittest

from support import LEGACY_HEADER, m, main

FLOATS_0_TO_5 = struct.pack("6f", 0, 1, 2, 3, 4, 5)


class Deleters:
    """Counts the C++ deleters that ran inside a with-block."""

    def __enter__(self):
        gc.collect()
        self.start = m.deleter_count()
        return self

    def ran(self):
        gc.collect()
        return m.deleter_count() - self.start

    def __exit__(self, *exc):
        return False


class Capsules(unittest.TestCase):
    def test_versioned_and_legacy_capsules_round_trip_and_delete_once(self):
        for versioned in (True, False):
            with Deleters() as d:
                cap = m.counted_capsule((2, 3), versioned=versioned)
                info = m.from_capsule(cap)
                self.assertEqual(info["shape"], (2, 3))
                self.assertEqual(info["strides"], (3, 1))
                self.assertEqual(info["dtype"], "float32")
                self.assertEqual(info["data"], FLOATS_0_TO_5)
                self.assertEqual(d.ran(), 1)
                del cap
                self.assertEqual(d.ran(), 1)

    def test_a_capsule_cannot_be_consumed_twice(self):
        with Deleters() as d:
            cap = m.counted_capsule((6,))
            m.from_capsule(cap)
            with self.assertRaisesRegex(ValueError, "already consumed"):
                m.from_capsule(cap)
            del cap
            self.assertEqual(d.ran(), 1)

    def test_an_unconsumed_capsule_deletes_once_when_it_dies(self):
        with Deleters() as d:
            cap = m.counted_capsule((2, 2))
            self.assertEqual(d.ran(), 0)
            del cap
            self.assertEqual(d.ran(), 1)

    def test_other_capsules_and_objects_are_refused_and_left_alone(self):
        t = m.counted((2,))
        api = getattr(type(t), "__dlpack_c_exchange_api__", None)
        if api is not None:
            with self.assertRaisesRegex(ValueError, "dlpack_exchange_api"):
                m.from_capsule(api)
            self.assertIn('"dlpack_exchange_api"', repr(api))  # not renamed
        with self.assertRaisesRegex(ValueError, "expected a DLPack capsule"):
            m.from_capsule(array.array("f", [1.0]))

    def test_set_python_error_maps_codes_to_exceptions(self):
        buffer_errors = {1: "version_mismatch", 13: "unsupported_device", 14: "device_mismatch",
                         16: "read_only", 18: "invalid_flags", 22: "overlapping"}
        type_errors = {11: "unsupported_dtype", 12: "dtype_mismatch", 15: "rank_mismatch"}
        for code in range(1, 23):
            expected = (BufferError if code in buffer_errors
                        else TypeError if code in type_errors else ValueError)
            with self.assertRaises(expected, msg="Errc value %d" % code) as caught:
                m.raise_error(code)
            self.assertIs(type(caught.exception), expected)
            self.assertIn("raised on request", str(caught.exception))


class TensorType(unittest.TestCase):
    def test_properties_and_device(self):
        t = m.counted((2, 3), "int64")
        self.assertEqual(type(t).__name__, "Tensor")
        self.assertEqual(type(t).__module__, "dlpackpp")
        self.assertIs(type(t), m.tensor_type())
        self.assertEqual(t.shape, (2, 3))
        self.assertEqual(t.dtype, "int64")
        self.assertEqual(t.device, "cpu")
        self.assertEqual(t.__dlpack_device__(), (1, 0))
        self.assertEqual(t.__dlpack_device__(), (1, 0))  # the second call reads the kept tuple
        self.assertFalse(t.exported)
        with self.assertRaises(TypeError):
            type(t)()

    def test_any_number_of_exports_share_the_buffer_and_delete_once(self):
        with Deleters() as d:
            t = m.counted((2, 3))
            legacy = t.__dlpack__()
            self.assertIn('"dltensor"', repr(legacy))
            self.assertTrue(t.exported)
            kwargs = {} if LEGACY_HEADER else {"max_version": (1, 0)}
            versioned = t.__dlpack__(**kwargs)
            again = t.__dlpack__()
            self.assertEqual(t.shape, (2, 3))
            for cap in (legacy, versioned, again):
                self.assertEqual(m.from_capsule(cap)["data"], FLOATS_0_TO_5)
            self.assertEqual(d.ran(), 0)  # the imports are gone, the object is not
            unconsumed = t.__dlpack__()
            del t
            self.assertEqual(d.ran(), 0)  # an unconsumed capsule still holds the tensor
            del unconsumed
            self.assertEqual(d.ran(), 1)
            del legacy, versioned, again
            self.assertEqual(d.ran(), 1)

    def test_exports_released_on_several_threads_at_once_delete_once(self):
        for _ in range(20):
            with Deleters() as d:
                t = m.counted((8,))
                for _ in range(16):
                    m.hold(t)  # exchange-table imports where the header has the table
                for _ in range(8):
                    m.hold(m.reexport(t))  # and exports of exports
                del t
                self.assertEqual(d.ran(), 0)
                m.drop_held_on_thread()
                self.assertEqual(d.ran(), 1)

    def test_an_export_outliving_the_object_keeps_the_buffer(self):
        with Deleters() as d:
            t = m.counted((2, 3))
            m.hold(t)
            del t
            self.assertEqual(d.ran(), 0)
            m.drop_held_on_thread()
            self.assertEqual(d.ran(), 1)
            self.assertNotEqual(m.last_deleter_thread(), threading.get_ident())
        with Deleters() as d:
            t = m.counted((2,))
            m.hold(t)
            m.drop_held_on_thread()
            self.assertEqual(d.ran(), 0)  # the object still holds it
            del t
            self.assertEqual(d.ran(), 1)
            self.assertEqual(m.last_deleter_thread(), threading.get_ident())

    @unittest.skipIf(LEGACY_HEADER, "a 0.x dlpack.h has no versioned capsule")
    def test_versioned_export_on_max_version(self):
        t = m.counted((3,))
        cap = t.__dlpack__(max_version=(1, 0))
        self.assertIn('"dltensor_versioned"', repr(cap))
        self.assertEqual(m.from_capsule(cap)["shape"], (3,))
        for old in ((0, 8), None):
            kwargs = {} if old is None else {"max_version": old}
            self.assertIn('"dltensor"', repr(m.counted((3,)).__dlpack__(**kwargs)))

    @unittest.skipIf(LEGACY_HEADER, "a 0.x dlpack.h has no READ_ONLY flag")
    def test_read_only_is_never_exported_as_legacy(self):
        t = m.counted((2,), read_only=True)
        self.assertTrue(t.read_only)
        with self.assertRaisesRegex(BufferError, "READ_ONLY"):
            t.__dlpack__()
        self.assertFalse(t.exported)  # refused before anything was handed out
        info = m.from_capsule(t.__dlpack__(max_version=(1, 3)))
        self.assertTrue(info["read_only"])

    @unittest.skipIf(LEGACY_HEADER, "a 0.x dlpack.h has no READ_ONLY flag")
    def test_writing_through_a_read_only_import_is_a_python_exception(self):
        with self.assertRaisesRegex(BufferError, "read_only|READ_ONLY|read-only"):
            m.write_first(m.counted((2,), read_only=True), 5.0)
        m.write_first(m.counted((2,)), 5.0)  # a writable one is fine

    def test_dl_device_and_copy(self):
        t = m.counted((2, 3))
        with self.assertRaises(BufferError):
            t.__dlpack__(dl_device=(2, 0))
        self.assertFalse(t.exported)
        if not LEGACY_HEADER:
            copy = m.from_capsule(t.__dlpack__(max_version=(1, 0), copy=True))
            self.assertEqual(copy["data"], FLOATS_0_TO_5)
            self.assertEqual(copy["flags"] & 2, 2)  # IS_COPIED
            self.assertFalse(t.exported)  # the copy is a new tensor; the original stays
        info = m.from_capsule(t.__dlpack__(dl_device=(1, 0)))
        self.assertEqual(info["data"], FLOATS_0_TO_5)

    def test_keywords_only(self):
        t = m.counted((1,))
        with self.assertRaises(TypeError):
            t.__dlpack__(None)
        with self.assertRaisesRegex(TypeError, "bogus"):
            t.__dlpack__(bogus=1)
        self.assertFalse(t.exported)

    def test_argument_checks(self):
        t = m.counted((1,))
        # stream: None, or -1 for a CPU tensor; another int is ValueError, a non-int TypeError.
        for stream in (None, -1):
            self.assertIn("dltensor", repr(t.__dlpack__(stream=stream)))
        for stream in (0, 1, 2**70):
            with self.assertRaisesRegex(ValueError, "stream must be None or -1"):
                t.__dlpack__(stream=stream)
        for stream in (object(), 1.0, "1", True):
            with self.assertRaisesRegex(TypeError, "stream must be an int or None"):
                t.__dlpack__(stream=stream)
        # max_version and dl_device: tuples of two ints.
        for bad in (1, (1,), (1, 0, 0), (1.0, 0), [1, 0], ("1", "0"), (True, 0)):
            with self.assertRaisesRegex(TypeError, "max_version must be a tuple of two ints"):
                t.__dlpack__(max_version=bad)
            with self.assertRaisesRegex(TypeError, "dl_device must be a tuple of two ints"):
                t.__dlpack__(dl_device=bad)
        with self.assertRaisesRegex(BufferError, "cannot be moved"):
            t.__dlpack__(dl_device=(2, 0))
        # Ints of any size are ints (they once raised OverflowError): a huge max_version asks
        # for the newest kind, a huge dl_device is another device.
        versioned = '"dltensor"' if LEGACY_HEADER else '"dltensor_versioned"'
        self.assertIn(versioned, repr(t.__dlpack__(max_version=(2**70, 0))))
        self.assertIn(versioned, repr(t.__dlpack__(max_version=(1, 2**70))))
        self.assertIn('"dltensor"', repr(t.__dlpack__(max_version=(-2**70, 0))))
        for device in ((2**70, 0), (1, 2**70), (-2**70, 0)):
            with self.assertRaisesRegex(BufferError, "cannot be moved"):
                t.__dlpack__(dl_device=device)
        # copy: None or a bool.
        for copy in (0, 1, "yes", object()):
            with self.assertRaisesRegex(TypeError, "copy must be a bool or None"):
                t.__dlpack__(copy=copy)
        self.assertIn("dltensor", repr(t.__dlpack__(copy=False)))

    def test_keyword_names_built_at_run_time(self):
        # A keyword name that is not the interned string is matched by its text.
        name = "".join(["max_", "version"])
        cap = m.counted((2,)).__dlpack__(**{name: (1, 0)})
        self.assertIn('"dltensor"' if LEGACY_HEADER else '"dltensor_versioned"', repr(cap))

    def test_deleter_runs_once_when_the_last_reference_dies(self):
        with Deleters() as d:
            t = m.counted((4,))
            alias = t
            del t
            self.assertEqual(d.ran(), 0)
            del alias
            self.assertEqual(d.ran(), 1)

    def test_import_and_borrow_of_a_tensor(self):
        with Deleters() as d:
            t = m.counted((2, 3), "int32")
            self.assertEqual(m.borrow(t)["shape"], (2, 3))
            self.assertEqual(m.borrow(t)["data"], struct.pack("6i", 0, 1, 2, 3, 4, 5))
            self.assertFalse(t.exported)  # borrowing takes no ownership
            for _ in range(2):
                self.assertEqual(m.import_tensor(t)["dtype"], "int32")
            self.assertTrue(t.exported)
            self.assertEqual(m.borrow(t)["data"], struct.pack("6i", 0, 1, 2, 3, 4, 5))
            self.assertEqual(d.ran(), 0)
            del t
            self.assertEqual(d.ran(), 1)

    def test_borrow_survives_exports_and_drops_inside_the_callback(self):
        # The callback exports the very tensor being borrowed and drops the export: the view
        # must stay readable (it once pointed into a freed tensor: ASan heap-use-after-free).
        kwargs = {} if LEGACY_HEADER else {"max_version": (1, 0)}
        with Deleters() as d:
            t = m.counted((2, 3))
            info = m.borrow_calling(t, lambda: m.from_capsule(t.__dlpack__(**kwargs)))
            self.assertEqual(info["data"], FLOATS_0_TO_5)
            info = m.borrow_calling(t, lambda: t.__dlpack__())
            self.assertEqual(info["data"], FLOATS_0_TO_5)
            holder = [m.counted((2, 3))]
            # The callback drops the last Python reference to the borrowed object.
            info = m.borrow_calling(holder[0], holder.clear)
            self.assertEqual(info["data"], FLOATS_0_TO_5)
            self.assertEqual(d.ran(), 1)
            del t
            self.assertEqual(d.ran(), 2)


class HostileProducers(unittest.TestCase):
    """Producers whose __dlpack__ fights back: each case once cost memory safety or time."""

    def test_state_deleted_during_an_import(self):
        # Under the limited API the per-interpreter state lives in builtins.__dict__, where
        # Python code can delete it; the import holds it until it returns (the retry after
        # the TypeError once read freed memory: ASan heap-use-after-free). Elsewhere there is
        # no such entry and the producer deletes nothing.
        import builtins

        class Evil:
            def __dlpack__(self, **kwargs):
                for key in [k for k in vars(builtins) if k.startswith("__dlpackpp_internals_")]:
                    del vars(builtins)[key]
                raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")

        for _ in range(2):
            with self.assertRaises(TypeError):
                m.import_tensor(Evil())
        self.assertEqual(m.import_tensor(m.counted((2,)))["shape"], (2,))

    def test_a_reentrant_producer_costs_linearly(self):
        # Each level's __dlpack__ imports the next; the bottom raises a TypeError that is not
        # about the keywords. Only a refusal of max_version is retried without it: a retry on
        # any TypeError doubled the calls per level (2**13 - 1 here).
        calls = []

        class Reentrant:
            def __init__(self, depth):
                self.depth = depth

            def __dlpack__(self, **kwargs):
                calls.append(self.depth)
                if self.depth:
                    m.import_tensor(Reentrant(self.depth - 1))
                raise TypeError("the bottom")

        for only_reading in (False, True):
            del calls[:]
            with self.assertRaisesRegex(TypeError, "the bottom"):
                m.import_tensor(Reentrant(12), only_reading=only_reading)
            self.assertEqual(len(calls), 13)

    def test_a_keyword_refusal_is_retried_once_per_type(self):
        calls = []

        class Old:
            def __dlpack__(self, stream=None):  # a refused max_version never gets here
                calls.append(stream)
                return m.counted((3,)).__dlpack__()

        for _ in range(3):
            self.assertEqual(m.import_tensor(Old())["shape"], (3,))
        self.assertEqual(len(calls), 3)

    def test_an_interrupt_is_never_retried(self):
        # A reader asks for the legacy capsule first; only a BufferError refusal is asked
        # again with max_version.
        calls = []

        class Interrupting:
            def __dlpack__(self, **kwargs):
                calls.append(kwargs)
                raise KeyboardInterrupt

        for only_reading in (False, True):
            del calls[:]
            with self.assertRaises(KeyboardInterrupt):
                m.import_tensor(Interrupting(), only_reading=only_reading)
            self.assertEqual(len(calls), 1)


class StrayExchangeAttributes(unittest.TestCase):
    """Only a "dlpack_exchange_api" capsule in __dlpack_c_exchange_api__ is ever read."""

    def producer(self, **attributes):
        def dlpack(self, **keywords):
            return self.tensor.__dlpack__(**keywords)

        namespace = dict(attributes, __dlpack__=dlpack)
        producer_type = type("Stray", (), namespace)
        obj = producer_type()
        obj.tensor = m.counted((2, 3))
        return obj

    def test_an_integer_is_never_dereferenced(self):
        for name in ("__c_dlpack_exchange_api__", "__dlpack_c_exchange_api__"):
            for value in (12345, 0, -1, 2**64 - 8):
                obj = self.producer(**{name: value})
                self.assertEqual(m.import_tensor(obj)["data"], FLOATS_0_TO_5, (name, value))
                self.assertEqual(m.borrow(obj)["data"], FLOATS_0_TO_5)
                self.assertIsNone(m.exchange_api_of(obj))

    def test_other_objects_are_ignored(self):
        cap = m.counted_capsule((1,), versioned=not LEGACY_HEADER)  # a capsule of another name
        for value in (cap, "12345", None, object()):
            obj = self.producer(__dlpack_c_exchange_api__=value)
            self.assertEqual(m.import_tensor(obj)["data"], FLOATS_0_TO_5)
            self.assertIsNone(m.exchange_api_of(obj))

    def test_exchange_api_of(self):
        t = m.counted((1,))
        if m.has_exchange_api():
            self.assertIsInstance(m.exchange_api_of(t), int)
            self.assertEqual(m.exchange_api_of(t), m.exchange_api_of(m.counted((2,))))
        else:
            self.assertIsNone(m.exchange_api_of(t))
        self.assertIsNone(m.exchange_api_of(object()))
        self.assertIsNone(m.exchange_api_of(1.5))


def capsule_of(n):
    """A __dlpack__ body: a fresh capsule of n floats (legacy where the header has no other)."""
    return lambda self, **keywords: m.counted_capsule((n,), versioned=not LEGACY_HEADER)


class DlpackMethodLookup(unittest.TestCase):
    """Import may call a type's __dlpack__ found in CPython's type cache (full API, instances
    without __dict__, the generic attribute lookup): a type changed afterwards is seen at once,
    and an object whose instances or type can shadow the method is looked up by name."""

    def test_a_replaced_method_is_called(self):
        class Slotted:
            __slots__ = ()
            __dlpack__ = capsule_of(2)

        obj = Slotted()
        for _ in range(2):  # the second import finds the method in the warm type cache
            self.assertEqual(m.import_tensor(obj)["shape"], (2,))
        Slotted.__dlpack__ = capsule_of(3)
        self.assertEqual(m.import_tensor(obj)["shape"], (3,))

    def test_a_method_replaced_on_a_base_class_is_called(self):
        class Base:
            __slots__ = ()
            __dlpack__ = capsule_of(2)

        class Derived(Base):
            __slots__ = ()

        obj = Derived()
        for _ in range(2):
            self.assertEqual(m.import_tensor(obj)["shape"], (2,))
        Base.__dlpack__ = capsule_of(4)
        self.assertEqual(m.import_tensor(obj)["shape"], (4,))

    def test_a_getattribute_added_later_is_honoured(self):
        class Slotted:
            __slots__ = ()
            __dlpack__ = capsule_of(2)

        def getattribute(self, name):
            if name == "__dlpack__":
                return lambda **keywords: m.counted_capsule((6,), versioned=not LEGACY_HEADER)
            return object.__getattribute__(self, name)

        obj = Slotted()
        for _ in range(2):
            self.assertEqual(m.import_tensor(obj)["shape"], (2,))
        Slotted.__getattribute__ = getattribute  # obj.__dlpack__ is now what it returns
        self.assertEqual(m.import_tensor(obj)["shape"], (6,))

    def test_an_instance_attribute_shadows_the_method(self):
        class WithDict:
            __dlpack__ = capsule_of(2)

        obj = WithDict()
        self.assertEqual(m.import_tensor(obj)["shape"], (2,))
        obj.__dlpack__ = lambda **keywords: m.counted_capsule((5,), versioned=not LEGACY_HEADER)
        self.assertEqual(m.import_tensor(obj)["shape"], (5,))


if __name__ == "__main__":
    main()
