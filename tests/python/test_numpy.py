# SPDX-License-Identifier: Apache-2.0
"""NumPy as producer and consumer: every layout and dtype against NumPy's own values. With
Debian's NumPy 1.24 (legacy protocol only) the max_version fallback runs for real; NumPy 2.x
takes the versioned path (its own checks are in test_numpy_versioned.py)."""
import gc
import sys
import sysconfig
import threading
import unittest

from support import LEGACY_HEADER, m, main, require

np = require("numpy", "NumPy is the reference producer here (apt-get install python3-numpy)")
NUMPY_VERSION = tuple(int(part) for part in np.__version__.split(".")[:2])
NUMPY2 = NUMPY_VERSION >= (2, 0)

# NumPy exchanges bool through DLPack from 1.25 on (Debian's 1.24 refuses it).
DTYPES = (["bool"] if NUMPY_VERSION >= (1, 25) else []) + ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]


def layouts(dtype):
    """(name, array) pairs: every layout the tests import, all writable."""
    base = (np.arange(60) % 7).astype(dtype).reshape(4, 15)
    return [
        ("contiguous", base),
        ("transposed", base.T),
        ("sliced with steps", base[::2, 1::3]),
        ("negative steps", base[::-1, ::-2]),
        ("fortran", np.asfortranarray(base)),
        ("3-d permuted", base.reshape(3, 4, 5).transpose(2, 0, 1)),
        ("0-d", np.array(base[1, 2])),
        ("zero-size", base[:0]),
        ("zero-size inner", base[:, 3:3]),
        ("column", base[:, 4:5]),
    ]


def legacy_producer_type():
    """A fresh type (the fallback is remembered per type) of the legacy protocol: its
    __dlpack__ takes stream only; `calls` records the keywords of each call."""

    class LegacyProducer:
        calls = []

        def __init__(self, array):
            self.array = array

        def __dlpack__(self, **keywords):
            LegacyProducer.calls.append(tuple(sorted(keywords)))
            if set(keywords) - {"stream"}:
                raise TypeError("__dlpack__() got an unexpected keyword argument")
            return self.array.__dlpack__()

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

    return LegacyProducer


class Import(unittest.TestCase):
    def check(self, array, info, where):
        self.assertEqual(info["shape"], array.shape, where)
        if array.size > 0:  # an empty tensor's strides mean nothing; extent-1 ones neither
            expected = tuple(s // array.itemsize for s in array.strides)
            for got, want, extent in zip(info["strides"], expected, array.shape):
                if extent > 1:
                    self.assertEqual(got, want, where)
        self.assertEqual(info["dtype"], array.dtype.name, where)
        self.assertEqual(info["device"], "cpu", where)
        self.assertEqual(info["data"], np.ascontiguousarray(array).tobytes(), where)

    def test_every_layout_and_dtype(self):
        for dtype in DTYPES:
            for name, array in layouts(dtype):
                where = "%s %s" % (dtype, name)
                before = sys.getrefcount(array)
                self.check(array, m.import_tensor(array), where)
                self.check(array, m.borrow(array), where)
                # NumPy's deleter ran exactly once per import: its reference is back.
                self.assertEqual(sys.getrefcount(array), before, where)

    @unittest.skipIf(NUMPY2, "NumPy 2.x speaks the versioned protocol")
    def test_numpy_1_rejects_max_version_so_the_fallback_is_real(self):
        with self.assertRaises(TypeError):
            np.arange(3).__dlpack__(max_version=(1, 0))

    def test_fallback_is_remembered_per_type(self):
        LegacyProducer = legacy_producer_type()
        array = np.arange(6.0)
        for _ in range(5):
            self.assertEqual(m.import_tensor(LegacyProducer(array))["data"], array.tobytes())
        expected = [()] * 5 if LEGACY_HEADER else [("max_version",)] + [()] * 5
        self.assertEqual(LegacyProducer.calls, expected)

    def test_a_stream_survives_the_fallback(self):
        LegacyProducer = legacy_producer_type()
        m.import_tensor(LegacyProducer(np.arange(2.0)), stream=None)
        m.import_tensor(LegacyProducer(np.arange(2.0)), stream=1)
        self.assertEqual(LegacyProducer.calls[-1], ("stream",))

    def test_legacy_producers_cannot_promise_copy_or_another_device(self):
        producer = legacy_producer_type()(np.arange(2.0))
        m.import_tensor(producer)  # learn that the type is legacy
        with self.assertRaisesRegex(BufferError, "copy=True"):
            m.import_tensor(producer, copy=True)
        with self.assertRaisesRegex(BufferError, "dl_device"):
            m.import_tensor(producer, dl_device=(2, 0))
        self.assertEqual(m.import_tensor(producer, dl_device=(1, 0))["shape"], (2,))

    def test_writes_go_through_to_numpy_memory(self):
        array = np.zeros(3, dtype=np.float64)
        m.write_first(array, 42.0)
        self.assertEqual(array[0], 42.0)

    def test_read_only_arrays_reach_the_caller_as_exceptions(self):
        array = np.arange(3.0)
        array.flags.writeable = False
        if NUMPY2 and not LEGACY_HEADER:
            self.assertTrue(m.import_tensor(array)["read_only"])
            with self.assertRaises(BufferError):
                m.write_first(array, 1.0)
            self.assertEqual(array[0], 0.0)
        else:
            # NumPy 1.x (or any NumPy asked without max_version, as the legacy-only subset
            # asks) refuses to export it; its own BufferError comes through unchanged.
            with self.assertRaisesRegex(BufferError, "readonly"):
                m.import_tensor(array)
            with self.assertRaisesRegex(BufferError, "readonly"):
                m.write_first(array, 1.0)

    def test_non_dlpack_objects_raise(self):
        with self.assertRaises(AttributeError):
            m.import_tensor([1, 2, 3])


class Export(unittest.TestCase):
    def test_np_from_dlpack_sees_the_values_and_deletes_once(self):
        for dtype in ("float32", "float64", "int32", "int64"):
            gc.collect()
            start = m.deleter_count()
            array = np.from_dlpack(m.counted((2, 3), dtype))
            self.assertEqual(array.dtype, np.dtype(dtype))
            np.testing.assert_array_equal(array, np.arange(6).reshape(2, 3))
            self.assertEqual(m.deleter_count(), start)
            view = array[1]
            del array
            gc.collect()
            self.assertEqual(m.deleter_count(), start)  # a view still holds the memory
            del view
            gc.collect()
            self.assertEqual(m.deleter_count(), start + 1)

    def test_any_dtype_numpy_knows(self):
        for dtype in DTYPES:
            expected = (np.arange(6) % 3).astype(dtype).reshape(3, 2)
            got = np.from_dlpack(m.from_bytes(expected.tobytes(), (3, 2), dtype))
            self.assertEqual(got.dtype, expected.dtype)
            np.testing.assert_array_equal(got, expected)

    def test_read_only_tensors(self):
        if LEGACY_HEADER:
            self.skipTest("a 0.x dlpack.h has no READ_ONLY flag")
        t = m.counted((2,), read_only=True)
        if NUMPY2:
            array = np.from_dlpack(t)
            self.assertFalse(array.flags.writeable)
        else:
            with self.assertRaisesRegex(BufferError, "READ_ONLY"):
                np.from_dlpack(t)  # NumPy 1.24 asks for the legacy protocol only

    def test_reexported_numpy_views_keep_their_layout_and_copy_compactly(self):
        for name, array in layouts("float64"):
            t = m.reexport(array)
            self.assertEqual(t.shape, array.shape, name)
            if not LEGACY_HEADER:
                copy = m.from_capsule(t.__dlpack__(max_version=(1, 0), copy=True))
                self.assertEqual(copy["data"], np.ascontiguousarray(array).tobytes(), name)
                self.assertEqual(copy["flags"] & 2, 2, name)  # IS_COPIED
            before = sys.getrefcount(array)
            back = np.from_dlpack(t)
            np.testing.assert_array_equal(back, array, name)
            del back, t
            gc.collect()
            self.assertEqual(sys.getrefcount(array), before - 1, name)  # NumPy's deleter ran

    def test_a_tensor_exports_any_number_of_times_sharing_its_buffer(self):
        gc.collect()
        start = m.deleter_count()
        t = m.counted((4,), "int64")
        first = np.from_dlpack(t)
        second = np.from_dlpack(t)
        self.assertTrue(t.exported)
        m.write_first(t, 42)  # one buffer: every export sees the write
        self.assertEqual(first[0], 42)
        self.assertEqual(second[0], 42)
        self.assertEqual(m.borrow(t)["data"][:8], np.int64(42).tobytes())
        del t, first
        gc.collect()
        self.assertEqual(m.deleter_count(), start)  # `second` still holds it
        self.assertEqual(second.tolist(), [42, 1, 2, 3])
        del second
        gc.collect()
        self.assertEqual(m.deleter_count(), start + 1)

    def test_borrow_survives_np_from_dlpack_inside_the_callback(self):
        t = m.counted((2, 3), "float64")
        info = m.borrow_calling(t, lambda: np.from_dlpack(t))
        self.assertEqual(info["data"], np.arange(6.0).tobytes())

    @unittest.skipIf(LEGACY_HEADER or not NUMPY2, "NumPy imports this tensor read-only (1.x: "
                     "every DLPack import; 2.x: a legacy one) and then refuses to export it "
                     "through the legacy protocol")
    def test_an_export_dropped_on_a_cpp_thread_runs_the_deleter_there(self):
        gc.collect()
        start = m.deleter_count()
        t = m.counted((3,))
        alias = np.from_dlpack(t)
        m.hold(alias)  # a C++ import of NumPy's import of the tensor
        del t, alias
        gc.collect()
        self.assertEqual(m.deleter_count(), start)
        m.drop_held_on_thread()  # takes the GIL to release NumPy's array, the last holder
        self.assertEqual(m.deleter_count(), start + 1)
        if not sysconfig.get_config_var("Py_GIL_DISABLED"):  # else the owning thread frees it
            self.assertNotEqual(m.last_deleter_thread(), threading.get_ident())


class Validation(unittest.TestCase):
    """alignment (and require_strides) reach adoption, which validates once on every route:
    the owning import itself runs no second validation, yet refuses what the options refuse."""

    def test_misaligned_data_is_refused_by_every_route(self):
        misaligned = np.zeros(17, dtype=np.int8)[1:]
        aligned = np.zeros(16, dtype=np.int8)
        for obj in (misaligned, legacy_producer_type()(misaligned)):
            with self.assertRaisesRegex(ValueError, "aligned"):
                m.import_tensor(obj, alignment=16)
        for obj in (aligned, legacy_producer_type()(aligned)):
            self.assertEqual(m.import_tensor(obj, alignment=16)["shape"], (16,))
            if NUMPY2:  # NumPy 2 always gives strides
                self.assertEqual(m.import_tensor(obj, require_strides=True)["shape"], (16,))
            else:  # NumPy 1.x leaves them NULL for a contiguous array
                with self.assertRaisesRegex(ValueError, "strides is NULL"):
                    m.import_tensor(obj, require_strides=True)


class LegacyReadOnly(unittest.TestCase):
    """ImportOptions.legacy_read_only: what came through the legacy protocol is READ_ONLY."""

    def test_the_option_marks_legacy_imports_read_only(self):
        array = np.arange(4.0)
        legacy = legacy_producer_type()(array)
        self.assertFalse(m.import_tensor(legacy)["read_only"])  # the default keeps it writable
        if LEGACY_HEADER:
            # No READ_ONLY flag without a versioned struct: the option cannot apply.
            self.assertFalse(m.import_tensor(legacy, legacy_read_only=True)["read_only"])
            return
        self.assertTrue(m.import_tensor(legacy, legacy_read_only=True)["read_only"])
        with self.assertRaisesRegex(BufferError, "read_only|READ_ONLY|read-only"):
            m.write_first(m.reexport_with(legacy, True), 1.0)
        if NUMPY2:
            # A versioned export is not touched by the option.
            self.assertFalse(m.import_tensor(array, legacy_read_only=True)["read_only"])
            # Passed on, the tensor reaches NumPy read-only, as NumPy's own legacy import is.
            self.assertFalse(np.from_dlpack(m.reexport_with(legacy, True)).flags.writeable)
            self.assertTrue(np.from_dlpack(m.reexport_with(legacy, False)).flags.writeable)

@unittest.skipIf(LEGACY_HEADER, "without a versioned struct every request is a legacy one")
class OnlyReading(unittest.TestCase):
    """ImportOptions.only_reading: the legacy capsule first, READ_ONLY when it came that way."""

    def recording(self, inner, refuse_legacy=False):
        class Recording:
            def __init__(self):
                self.asked = []

            def __dlpack__(self, **kwargs):
                self.asked.append("max_version" in kwargs)
                if refuse_legacy and "max_version" not in kwargs:
                    raise BufferError("no legacy export")
                return inner.__dlpack__(**kwargs)

            def __dlpack_device__(self):
                return inner.__dlpack_device__()

        return Recording()

    def test_a_reader_asks_for_the_legacy_capsule_first(self):
        array = np.arange(4.0)
        if not NUMPY2:  # NumPy 1.x rejects max_version: the type is then legacy either way
            self.assertEqual(m.import_tensor(array, only_reading=True)["shape"], (4,))
            return
        x = self.recording(array)
        d = m.import_tensor(x, only_reading=True)
        self.assertEqual(x.asked, [False])
        self.assertEqual(d["shape"], (4,))
        self.assertTrue(d["read_only"])  # nothing said it may be written
        # Without the option, max_version and the producer's flags, as always.
        self.assertFalse(m.import_tensor(x)["read_only"])
        self.assertEqual(x.asked, [False, True])

    @unittest.skipUnless(NUMPY2, "NumPy 1.x refuses to export a read-only array at all")
    def test_a_refused_legacy_request_is_asked_again_with_max_version(self):
        array = np.arange(4.0)
        array.flags.writeable = False
        d = m.import_tensor(array, only_reading=True)  # NumPy 2 refuses the legacy export
        self.assertEqual(d["shape"], (4,))
        self.assertTrue(d["read_only"])
        x = self.recording(np.arange(3.0), refuse_legacy=True)
        self.assertEqual(m.import_tensor(x, only_reading=True)["shape"], (3,))
        self.assertEqual(x.asked, [False, True])

    def test_copy_and_dl_device_are_asked_with_max_version(self):
        if not NUMPY2:
            return
        x = self.recording(np.arange(2.0))
        m.import_tensor(x, only_reading=True, dl_device=(1, 0))
        self.assertEqual(x.asked, [True])


if __name__ == "__main__":
    main()
