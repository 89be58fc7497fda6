# SPDX-License-Identifier: Apache-2.0
"""The DLPack exchange API from Python: a mock framework type (made in test_module.cpp with
make_exchange_api) whose __dlpack__ raises if called, and dlpackpp.Tensor's own table."""
import gc
import struct
import unittest

from support import m, main, skip_script

if not m.has_exchange_api():
    skip_script("the dlpack.h in force has no exchange API (DLPack < 1.2): legacy-only subset")

FLOATS_0_TO_5 = struct.pack("6f", 0, 1, 2, 3, 4, 5)


def stats_change(action):
    before = m.mock_stats()
    result = action()
    after = m.mock_stats()
    return result, {k: after[k] - before[k] for k in after if after[k] != before[k]}


class MockFramework(unittest.TestCase):
    def test_import_uses_the_table_and_never_dunder_dlpack(self):
        info, calls = stats_change(lambda: m.import_tensor(m.mock()))
        self.assertEqual(info["shape"], (2, 3))
        self.assertEqual(info["data"], FLOATS_0_TO_5)
        self.assertEqual(calls, {"from_object": 1})
        with self.assertRaisesRegex(AssertionError, "must not be called"):
            m.mock().__dlpack__()  # the proof that import never went there

    def test_borrow_uses_dltensor_from_py_object(self):
        info, calls = stats_change(lambda: m.borrow(m.mock()))
        self.assertEqual(info["data"], FLOATS_0_TO_5)
        self.assertEqual(calls, {"borrow": 1})

    def test_a_borrow_through_the_table_is_read_only(self):
        # dltensor_from_py_object_no_sync fills a bare DLTensor: nothing says it may be
        # written, so the view is READ_ONLY and typed writes refuse (they once wrote).
        info, calls = stats_change(lambda: m.borrow(m.mock()))
        self.assertTrue(info["read_only"])
        self.assertEqual(calls, {"borrow": 1})
        with self.assertRaisesRegex(BufferError, "read"):
            m.borrow_write(m.mock(), 7.0)

    def test_a_writable_borrow_imports_with_ownership(self):
        # ImportOptions::writable: the table's owning entry, whose flags are known.
        _, calls = stats_change(lambda: m.borrow_write(m.mock(), 7.0, True))
        self.assertEqual(calls, {"from_object": 1})

    def test_current_stream(self):
        obj = m.mock()
        stream, calls = stats_change(lambda: m.current_stream(obj, 2, 0))
        self.assertEqual((stream, calls), (0x1234, {"stream": 1}))
        stream, calls = stats_change(lambda: m.current_stream(obj, 1, 0))
        self.assertEqual((stream, calls), (0, {}))  # CPU: nobody is asked
        self.assertEqual(m.current_stream(m.counted((1,)), 2, 0), 0)  # dlpackpp.Tensor: none

    def test_producer_failures_become_python_exceptions(self):
        with self.assertRaisesRegex(BufferError, "refused on request"):
            m.import_tensor(m.mock(1))
        with self.assertRaisesRegex(BufferError, "refused on request"):
            m.borrow(m.mock(1))
        with self.assertRaisesRegex(RuntimeError, "plain C\\+\\+ exception"):
            m.import_tensor(m.mock(2))

    def test_requests_the_table_cannot_carry_go_through_dunder_dlpack(self):
        # copy=True, a stream or a target device cannot be expressed through the table.
        with self.assertRaisesRegex(AssertionError, "must not be called"):
            m.import_tensor(m.mock(), copy=True)
        with self.assertRaisesRegex(AssertionError, "must not be called"):
            m.import_tensor(m.mock(), stream=1)

    def test_to_object_hands_ownership_to_the_producer(self):
        gc.collect()
        start = m.deleter_count()
        obj, calls = stats_change(lambda: m.mock_to_object((3,)))
        self.assertEqual(calls, {"to_object": 1})
        self.assertEqual(type(obj).__name__, "Tensor")
        self.assertEqual(m.borrow(obj)["data"], struct.pack("3f", 0, 1, 2))
        self.assertEqual(m.deleter_count(), start)
        del obj
        gc.collect()
        self.assertEqual(m.deleter_count(), start + 1)


class TensorTable(unittest.TestCase):
    def test_dlpackpp_tensor_carries_a_capsule_table(self):
        api = type(m.counted((1,))).__dlpack_c_exchange_api__
        self.assertIn('"dlpack_exchange_api"', repr(api))

    def test_imports_through_the_table_share_the_tensor(self):
        gc.collect()
        start = m.deleter_count()
        t = m.counted((2, 3))
        for _ in range(3):
            self.assertEqual(m.import_tensor(t)["data"], FLOATS_0_TO_5)
        self.assertEqual(m.deleter_count(), start)  # the object still holds it
        self.assertTrue(t.exported)
        self.assertIn("dltensor", repr(t.__dlpack__()))
        del t
        gc.collect()
        self.assertEqual(m.deleter_count(), start + 1)

    def test_exchange_api_of_finds_the_tables(self):
        self.assertIsInstance(m.exchange_api_of(m.mock()), int)
        self.assertNotEqual(m.exchange_api_of(m.mock()), m.exchange_api_of(m.counted((1,))))


if __name__ == "__main__":
    main()
