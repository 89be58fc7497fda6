# SPDX-License-Identifier: Apache-2.0
"""NumPy 2.x: the versioned protocol (max_version, READ_ONLY, copy, dl_device) both ways."""
import gc
import unittest

from support import LEGACY_HEADER, m, main, require, skip_script

np = require("numpy", "NumPy 2.x is the versioned-protocol peer (pip, see requirements.txt)")
if int(np.__version__.split(".")[0]) < 2:
    skip_script("NumPy %s speaks only the legacy protocol; the versioned leg needs NumPy 2.x "
                "(.ci/python-venv.sh installs it)" % np.__version__)
if LEGACY_HEADER:
    skip_script("a 0.x dlpack.h reads no versioned tensor (legacy-only subset)")


def recording_type():
    """A fresh wrapper type that forwards to NumPy and records each call's keywords."""

    class Recording:
        calls = []

        def __init__(self, array):
            self.array = array

        def __dlpack__(self, **keywords):
            Recording.calls.append(tuple(sorted(keywords)))
            return self.array.__dlpack__(**keywords)

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

    return Recording


class Import(unittest.TestCase):
    def test_max_version_is_accepted_so_no_fallback(self):
        self.assertIn('"dltensor_versioned"', repr(np.arange(2).__dlpack__(max_version=(1, 0))))
        Recording = recording_type()
        for _ in range(3):
            m.import_tensor(Recording(np.arange(4)))
        self.assertEqual(Recording.calls, [("max_version",)] * 3)

    def test_read_only_arrays_import_read_only_and_refuse_writes(self):
        array = np.arange(3.0)
        array.flags.writeable = False
        info = m.import_tensor(array)
        self.assertTrue(info["read_only"])
        self.assertEqual(info["data"], array.tobytes())
        with self.assertRaises(BufferError):
            m.write_first(array, 7.0)
        self.assertEqual(array[0], 0.0)

    def test_copy(self):
        array = np.arange(6.0).reshape(2, 3)[:, ::2]
        copied = m.import_tensor(array, copy=True)
        self.assertTrue(copied["is_copied"])
        self.assertEqual(copied["data"], np.ascontiguousarray(array).tobytes())
        self.assertFalse(m.import_tensor(array, copy=False)["is_copied"])
        Recording = recording_type()
        m.import_tensor(Recording(array), copy=True, stream=None)
        self.assertEqual(Recording.calls, [("copy", "max_version")])

    def test_dl_device(self):
        Recording = recording_type()
        self.assertEqual(m.import_tensor(Recording(np.arange(2.0)), dl_device=(1, 0))["device"], "cpu")
        self.assertEqual(Recording.calls, [("dl_device", "max_version")])
        with self.assertRaisesRegex(BufferError, "unsupported device"):
            m.import_tensor(np.arange(2.0), dl_device=(2, 0))  # NumPy's own exception


class Export(unittest.TestCase):
    def test_np_from_dlpack_with_copy_and_device(self):
        t = m.counted((2, 3), "int64")
        copied = np.from_dlpack(t, copy=True)
        self.assertFalse(t.exported)  # a copy, not the tensor
        np.testing.assert_array_equal(copied, np.arange(6).reshape(2, 3))
        gc.collect()
        start = m.deleter_count()
        shared = np.from_dlpack(t, device="cpu")
        self.assertTrue(t.exported)
        np.testing.assert_array_equal(shared, copied)
        del shared, t
        gc.collect()
        self.assertEqual(m.deleter_count(), start + 1)

    def test_read_only_tensor_becomes_a_read_only_array(self):
        array = np.from_dlpack(m.counted((3,), read_only=True))
        self.assertFalse(array.flags.writeable)
        np.testing.assert_array_equal(array, [0, 1, 2])


if __name__ == "__main__":
    main()
