# SPDX-License-Identifier: Apache-2.0
"""dlpackpp.Tensor with pending device work, without a GPU where it can be.

The recording hook (streams_module.cpp) reads `stream` with the CUDA hook's own function, so
these cases prove which stream each export orders, that a refused value orders nothing, that
the hook's context is released exactly once, with the tensor and before its deleter (after
the last export, on another thread, at exit),
and what the exchange table's current_work_stream reports. The CUDA room itself runs against
the real runtime where it is linked: its refusals everywhere, its error path without a
device, its events with one (skipped, saying so, without)."""
import os
import subprocess
import sys
import threading
import unittest

import importlib

#: The module under test: streams_module.cpp built with the full or the limited API.
MODULE = os.environ.get("DLPACKPP_STREAMS_MODULE", "dlpackpp_streams_test")
m = importlib.import_module(MODULE)

KDL_CPU, KDL_CUDA, KDL_CUDA_MANAGED = 1, 2, 13
# The kinds the hook records (detail::CudaConsumer), and the host reading a copy.
NO_WAIT, LEGACY, PER_THREAD, HANDLE, HOST = 0, 1, 2, 3, -2


def counts():
    """(hook contexts released, tensors released) so far."""
    return m.counts()


class StreamValues(unittest.TestCase):
    """The Python spec's CUDA rules, as the hook is asked."""

    def setUp(self):
        self.t = m.hooked(KDL_CUDA, 0, 4)
        m.orders()

    def test_each_value_orders_what_the_spec_says(self):
        cases = [({}, (LEGACY, 0)), ({"stream": None}, (LEGACY, 0)),
                 ({"stream": 1}, (LEGACY, 0)), ({"stream": 2}, (PER_THREAD, 0)),
                 ({"stream": -1}, (NO_WAIT, 0)), ({"stream": 3}, (HANDLE, 3)),
                 ({"stream": 0x7F00DEADBEEF}, (HANDLE, 0x7F00DEADBEEF)),
                 ({"stream": 2**64 - 1}, (HANDLE, 2**64 - 1))]
        for kwargs, want in cases:
            with self.subTest(kwargs=kwargs):
                self.t.__dlpack__(max_version=(1, 0), **kwargs)
                self.assertEqual(m.orders(), [want])

    def test_refused_values_order_nothing(self):
        for stream, error in ((0, ValueError), (-2, ValueError), (-(2**70), ValueError),
                              (2**64, ValueError), ("0", TypeError), (True, TypeError),
                              (1.0, TypeError)):
            with self.subTest(stream=stream):
                with self.assertRaises(error):
                    self.t.__dlpack__(stream=stream)
                self.assertEqual(m.orders(), [])

    def test_zero_is_refused_with_the_spec_reason(self):
        with self.assertRaisesRegex(ValueError, "0 is ambiguous"):
            self.t.__dlpack__(stream=0)

    def test_other_argument_errors_are_checked_first(self):
        with self.assertRaises(BufferError):
            self.t.__dlpack__(stream=5, dl_device=(KDL_CUDA, 1))
        with self.assertRaises(TypeError):
            self.t.__dlpack__(stream=5, copy="yes")
        self.assertEqual(m.orders(), [])

    def test_every_export_orders_its_own_consumer(self):
        capsules = [self.t.__dlpack__(stream=s) for s in (11, 12, 2, -1, None)]
        self.assertEqual(m.orders(), [(HANDLE, 11), (HANDLE, 12), (PER_THREAD, 0),
                                      (NO_WAIT, 0), (LEGACY, 0)])
        self.assertTrue(all(c is not None for c in capsules))
        self.assertTrue(self.t.exported)

    def test_a_host_copy_waits_on_the_host(self):
        # Managed memory is host-accessible: copy=True reads it on the host, after the wait.
        t = m.hooked(KDL_CUDA_MANAGED, 0, 4)
        capsule = t.__dlpack__(max_version=(1, 0), copy=True, stream=7)
        self.assertEqual(m.orders(), [(HOST, 0)])
        self.assertIn("dltensor_versioned", repr(capsule))
        # Device memory cannot be copied here: refused after the (skipped) wait.
        with self.assertRaises(BufferError):
            self.t.__dlpack__(max_version=(1, 0), copy=True)
        self.assertEqual(m.orders(), [(HOST, 0)])

    def test_the_exchange_table_is_no_sync(self):
        # An owning import through dlpackpp.Tensor's own table orders nothing (the spec's
        # _no_sync): the caller launches on current_work_stream, which orders nothing either.
        self.assertEqual(m.import_tensor(self.t), (KDL_CUDA, 0))
        m.current_stream(self.t, KDL_CUDA, 0)
        self.assertEqual(m.orders(), [])
        self.assertTrue(self.t.exported)

    def test_a_cpp_import_with_a_stream_asks_for_it(self):
        # ImportOptions::stream goes through __dlpack__(stream=...): the producer orders its
        # work before the importer's stream.
        self.assertEqual(m.import_tensor(self.t, 0xC0FFEE), (KDL_CUDA, 0))
        self.assertEqual(m.orders(), [(HANDLE, 0xC0FFEE)])
        with self.assertRaises(ValueError):
            m.import_tensor(self.t, 0)  # the producer's refusal reaches the importer
        self.assertEqual(m.orders(), [])


    def test_a_borrow_in_place_with_a_stream_orders_it(self):
        # The borrow engine reads a dlpackpp.Tensor in place (no __dlpack__ call): a stream
        # asked for is ordered through the object's hook all the same, and only then.
        self.assertEqual(m.import_tensor(self.t, None, True), (KDL_CUDA, 0))
        self.assertEqual(m.orders(), [])
        self.assertEqual(m.import_tensor(self.t, 0xC0FFEE, True), (KDL_CUDA, 0))
        self.assertEqual(m.orders(), [(HANDLE, 0xC0FFEE)])
        self.assertEqual(m.import_tensor(self.t, 2, True), (KDL_CUDA, 0))
        self.assertEqual(m.orders(), [(PER_THREAD, 0)])
        with self.assertRaises(ValueError):
            m.import_tensor(self.t, 0, True)  # the hook's refusal reaches the borrower
        self.assertEqual(m.orders(), [])
        self.assertFalse(self.t.exported)  # read in place: nothing was exported


class Release(unittest.TestCase):
    """The hook's context goes exactly once, with the tensor (the object and every export),
    just before the tensor's deleter: the CUDA hook orders the consumers' streams there."""

    def test_once_with_the_last_export_before_the_deleter(self):
        released, deleted = counts()
        t = m.hooked(KDL_CUDA, 0, 4)
        capsules = [t.__dlpack__(stream=s) for s in (3, 4)]
        del t
        self.assertEqual(counts(), (released, deleted))  # the exports hold tensor and hook
        capsules.pop()
        self.assertEqual(counts(), (released, deleted))
        del capsules
        self.assertEqual(counts(), (released + 1, deleted + 1))
        self.assertEqual(m.deleters_at_release(), deleted)  # the hook went first

    def test_with_the_object_when_nothing_was_exported(self):
        released, deleted = counts()
        t = m.hooked(KDL_CUDA, 0, 4)
        self.assertEqual(m.import_tensor(t, 3, True), (KDL_CUDA, 0))  # read in place
        del t
        self.assertEqual(counts(), (released + 1, deleted + 1))
        self.assertEqual(m.deleters_at_release(), deleted)

    def test_on_another_thread(self):
        released, deleted = counts()
        box = [m.hooked(KDL_CUDA, 0, 4)]
        box[0].__dlpack__(stream=3)
        worker = threading.Thread(target=box.clear)
        worker.start()
        worker.join()
        self.assertEqual(counts(), (released + 1, deleted + 1))

    def test_at_exit(self):
        # Objects alive at exit, one with an export alive too: the interpreter releases them
        # while it finalizes, each hook exactly once (counted on stderr by the hook itself).
        code = ("import %s as m\n" % MODULE +
                "a = m.hooked(2, 0, 4)\n"
                "b = m.hooked(2, 0, 4)\n"
                "c = b.__dlpack__(stream=3)\n"
                "m.keep = (a, b, c)\n")
        for run in range(3):
            done = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, universal_newlines=True,
                                  env=os.environ.copy(), timeout=120)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertLessEqual(done.stderr.count("hook released"), 2, done.stderr)
            # CPython clears module globals at exit; a run that released none proves nothing.
            if run == 0:
                self.assertEqual(done.stderr.count("hook released"), 2, done.stderr)


class CurrentWorkStream(unittest.TestCase):
    """The exchange table's current_work_stream: this thread's, per device; NULL on CPU."""

    def test_per_thread_and_device(self):
        t = m.hooked(KDL_CUDA, 0, 4)
        m.set_work_stream(KDL_CUDA, 0, 0x1234)
        m.set_work_stream(KDL_CUDA, 1, 0x5678)
        self.assertEqual(m.current_stream(t, KDL_CUDA, 0), 0x1234)
        self.assertEqual(m.current_stream(t, KDL_CUDA, 1), 0x5678)
        self.assertEqual(m.current_stream(t, KDL_CUDA, 2), 0)
        self.assertEqual(m.current_stream(t, KDL_CPU, 0), 0)
        seen = []
        worker = threading.Thread(target=lambda: seen.append(m.current_stream(t, KDL_CUDA, 0)))
        worker.start()
        worker.join()
        self.assertEqual(seen, [0])  # another thread has its own (none yet: the default)
        m.set_work_stream(KDL_CUDA, 0, 0)


@unittest.skipUnless(m.has_cuda_runtime(), "built without the CUDA runtime (CUDAToolkit's "
                     "CUDA::cudart not found): python/cuda.hpp is not compiled here")
class CudaRoom(unittest.TestCase):
    """python/cuda.hpp against the real CUDA runtime."""

    def test_refuses_a_tensor_not_in_cuda_memory(self):
        released, deleted = counts()
        for device in (KDL_CPU, 3):  # CPU, cuda_host
            with self.assertRaisesRegex(BufferError, "cuda or cuda_managed"):
                m.with_stream(device, 0, 4, 0)
            self.assertTrue(m.untouched())
        self.assertEqual(counts(), (released, deleted + 2))  # released by the caller

    def test_without_a_device_the_error_names_the_call(self):
        if m.cuda_devices() > 0:
            self.skipTest("a CUDA device is present: the no-device path cannot be taken")
        # Errc::unsupported_device: BufferError naming the CUDA call and CUDA's error.
        with self.assertRaisesRegex(BufferError, r"cuda\w* failed on cuda:0: cudaError"):
            m.with_stream(KDL_CUDA, 0, 4, 0)
        self.assertTrue(m.untouched())

    def test_with_a_device_the_event_is_made_and_used(self):
        if m.cuda_devices() == 0:
            self.skipTest("no CUDA device: the event path needs one (tests/cuda/gpu_check.sh)")
        _, deleted = counts()
        # Host memory claiming cuda:0 is never read: only events and waits run.
        obj = m.with_stream(KDL_CUDA, 0, 4, 0)
        for stream in (None, 1, 2, -1):
            obj.__dlpack__(stream=stream)
        with self.assertRaises(ValueError):
            obj.__dlpack__(stream=0)
        self.assertEqual(m.current_stream(obj, KDL_CUDA, 0), 0)
        del obj
        self.assertEqual(counts()[1], deleted + 1)


if __name__ == "__main__":
    program = unittest.main(exit=False, verbosity=2)
    sys.exit(0 if program.result.wasSuccessful() and program.result.testsRun else 1)
