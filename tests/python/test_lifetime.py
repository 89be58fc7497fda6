# SPDX-License-Identifier: Apache-2.0
"""Deleters without the GIL and at interpreter exit."""
import gc
import os
import subprocess
import sys
import sysconfig
import textwrap
import threading
import unittest
import weakref

from support import MODULE_NAME, m, main

# CPython's free-threaded build frees an object on the thread that owns it (biased reference
# counting), so a last reference dropped elsewhere may be freed here.
FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


class Owner:
    """Records on which thread it was released."""

    released_on = []

    def __del__(self):
        Owner.released_on.append(threading.get_ident())


class KeptProducerException(unittest.TestCase):
    """The producer exception a refused import keeps for set_python_error() (its traceback's
    frames and their locals) goes with its thread, or at once with discard_python_error; it
    was once kept per thread for ever (200 threads with a 1 MiB local: +200 MiB)."""

    class Payload:
        pass

    class Refusing:
        """Refuses every export; the frame the traceback keeps references the payload."""

        def __init__(self, payload):
            self.payload = payload

        def __dlpack__(self, **kwargs):
            held = self.payload
            raise BufferError("refused, holding a %s" % type(held).__name__)

    def refusing(self, payload):
        return self.Refusing(payload)

    def test_released_when_its_thread_ends(self):
        payload = self.Payload()
        alive = weakref.ref(payload)
        producer = self.refusing(payload)
        del payload
        thread = threading.Thread(target=lambda: m.import_refused(producer, False))
        thread.start()
        thread.join()
        del producer
        gc.collect()
        self.assertIsNone(alive())

    def test_released_by_discard_python_error(self):
        payload = self.Payload()
        alive = weakref.ref(payload)
        producer = self.refusing(payload)
        del payload
        self.assertFalse(m.import_refused(producer, True))
        del producer
        gc.collect()
        self.assertIsNone(alive())


class WithoutTheGil(unittest.TestCase):
    def test_object_ref_released_on_a_cpp_thread(self):
        Owner.released_on = []
        owner = Owner()
        alive = weakref.ref(owner)
        before = sys.getrefcount(owner)
        m.owner_drop_on_thread(owner)
        self.assertEqual(sys.getrefcount(owner), before)  # released exactly once
        del owner
        self.assertIsNone(alive())
        self.assertEqual(len(Owner.released_on), 1)

    def test_the_last_reference_dropped_on_a_cpp_thread(self):
        Owner.released_on = []
        # Only the tensor holds the owner: __del__ runs on the C++ thread, under the GIL the
        # deleter took there.
        m.owner_drop_on_thread(Owner, True)
        self.assertEqual(len(Owner.released_on), 1)
        if not FREE_THREADED:  # there the thread that owns the object frees it
            self.assertNotEqual(Owner.released_on[0], threading.get_ident())

    def test_an_imported_numpy_array_destroyed_on_a_cpp_thread(self):
        try:
            import numpy as np
        except ImportError:
            self.skipTest("NumPy is not importable")
        array = np.arange(10.0)
        before = sys.getrefcount(array)
        for _ in range(3):
            m.drop_on_thread(array)
        self.assertEqual(sys.getrefcount(array), before)

    def test_a_dlpackpp_tensor_imported_and_destroyed_on_a_cpp_thread(self):
        gc.collect()
        start = m.deleter_count()
        m.drop_on_thread(m.counted((3,)))
        self.assertEqual(m.deleter_count(), start + 1)


class Noisy:
    """Raises and handles an exception of its own while being released."""

    released = 0

    def __del__(self):
        Noisy.released += 1
        try:
            raise ValueError("inside __del__")
        except ValueError:
            pass


class PendingExceptions(unittest.TestCase):
    def test_capsule_and_tensor_deaths_keep_a_pending_exception(self):
        for as_tensor in (False, True):
            Noisy.released = 0
            with self.assertRaisesRegex(KeyError, "kept"):
                m.dies_during_exception(Noisy, as_tensor)
            self.assertEqual(Noisy.released, 1)


class AtExit(unittest.TestCase):
    def test_tensors_alive_at_interpreter_exit(self):
        script = textwrap.dedent("""
            import importlib, sys
            m = importlib.import_module(%r)

            class Owner:
                def __del__(self):
                    pass

            # A C++ static destroyed after Py_Finalize, owning a Python reference.
            m.keep_until_exit(Owner())
            # Module globals torn down during finalization.
            tensor = m.owner_tensor(Owner())
            counted = m.counted((2, 2))
            capsule = m.counted_capsule((3,))
            print("alive at exit")
            sys.stdout.flush()
        """ % MODULE_NAME)
        result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                env=dict(os.environ), timeout=120)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("alive at exit", result.stdout)
        self.assertNotIn("ERROR", result.stderr)

    def test_references_released_on_a_cpp_thread_racing_exit_never_abort(self):
        # A detached C++ thread keeps releasing references while the interpreter exits. The
        # last atexit callback (a builtin: no bytecode, so the GIL is never offered) keeps the
        # GIL long enough for that thread to be waiting for it when finalization begins; then
        # __del__ sleeps, handing the GIL over. A thread that takes the GIL once finalization
        # began is ended with pthread_exit, inside noexcept code: "terminate called without an
        # active exception". The deleter must not be waiting there at all.
        script = textwrap.dedent("""
            import atexit, importlib, time
            m = importlib.import_module(%r)

            class Owner:
                pass

            class Sleepy:
                def __del__(self):
                    for _ in range(10):
                        time.sleep(0.002)

            owner = Owner()
            m.release_on_thread_at_exit(owner, 3000)
            atexit.register(sum, range(2 * 10**7))  # runs first: the GIL held, in C
            time.sleep(0.01)
            sleepers = [Sleepy() for _ in range(3)]
            print("exiting")
        """ % MODULE_NAME)
        for run in range(5):
            result = subprocess.run([sys.executable, "-c", script], capture_output=True,
                                    text=True, env=dict(os.environ), timeout=120)
            self.assertEqual(result.returncode, 0, "run %d: %s" % (run, result.stderr))
            self.assertIn("exiting", result.stdout)
            self.assertNotIn("terminate", result.stderr)


if __name__ == "__main__":
    main()
