# SPDX-License-Identifier: Apache-2.0
"""The casters at the edges of the boundary (issue 34's repros, each failing before its fix):
a daemon thread inside a caster at interpreter exit, a producer's interrupt beside an argument
that does not fit, classes before a later `object` overload, errors from a fresh module,
re-entrant producers whose TypeError names a keyword, and explain_refusal."""
import os
import subprocess
import sys
import textwrap
import unittest

from bind_support import MODULE_NAME, NANOBIND, Raising, Reentrant, m, np, run_tests, torch


def run_fresh(code, timeout=120):
    """Runs `code` in a new interpreter that imports the module under test as `m`."""
    script = "import %s as m\n" % MODULE_NAME + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=timeout, env=os.environ.copy())


class DaemonThreadAtExit(unittest.TestCase):
    """CPython 3.13 and older end a daemon thread that re-attaches after finalization began
    with pthread_exit, a forced unwind through the caster; catching it there touched Python
    with no thread state (exit 139)."""

    SCRIPT = """
        import sys, threading, time
        started = threading.Event()

        class Slow:
            def __dlpack__(self, **kwargs):
                started.set()
                time.sleep(0.3)  # finalization begins meanwhile
                raise BufferError("too late")

        class HoldsFinalizationOpen:
            def __del__(self, sleep=time.sleep):
                sleep(1.0)  # the daemon thread wakes meanwhile and re-attaches

        # Modules are cleared after finalization began: this one's death holds it open.
        sys.modules["holds_finalization_open"] = HoldsFinalizationOpen()
        threading.Thread(target=lambda: m.{call}(Slow()), daemon=True).start()
        started.wait()
        print("main thread done")
    """

    def test_every_parameter_kind_exits_cleanly(self):
        for call in ("describe", "total", "fill_", "owned"):
            with self.subTest(call=call):
                script = self.SCRIPT.replace("m.{call}(Slow())", "m.%s(Slow()%s)" % (
                    call, ", 1.0" if call == "fill_" else ""))
                done = run_fresh(script)
                self.assertTrue(self.unwound(done), done.stderr[-3000:])
                self.assertIn("main thread done", done.stdout)

    @staticmethod
    def unwound(done):
        """Whether the daemon thread left the caster without a crash. Under AddressSanitizer
        (the sanitized legs) a forced unwind always ends in one known report: the frames it
        abandons keep their poisoned redzones, and ASan's own unpoisoning on the way out
        (__asan_handle_no_return) writes over them, which it reports as a stack-buffer-
        underflow ("may be a false positive if your program uses some custom stack unwind
        mechanism"). Where the frames it passes leave ASan nothing to unpoison, the unwind
        reaches the binding library's `catch (abi::__forced_unwind&)` (pybind11's dispatcher,
        the nanobind caster's), and UBSan reports binding that reference: a forced unwind is
        a foreign exception with no C++ object, so the reference is null by design. A caster
        that touches Python there is a SEGV report instead."""
        if done.returncode == 0:
            return True
        report = done.stderr
        if "SEGV" in report:
            return False
        return (("AddressSanitizer: stack-buffer-underflow" in report
                 and "__asan_handle_no_return" in report)
                or "reference binding to null pointer of type 'struct __forced_unwind'" in report)


class Interrupts(unittest.TestCase):
    """A producer's KeyboardInterrupt, SystemExit or MemoryError ends the call unchanged even
    when another argument of the overload does not fit, and the producer is asked at most
    twice."""

    def test_beside_an_argument_that_does_not_fit(self):
        calls = {
            "one overload": lambda p: m.fill_(p, "not a number"),
            "two overloads": lambda p: m.scale_(p, "not a number"),
            "view and text": lambda p: m.parse_device(p, 5),
        }
        for exc in (KeyboardInterrupt, SystemExit, MemoryError):
            for kind, call in calls.items():
                with self.subTest(exc=exc, kind=kind):
                    producer = Raising(exc)
                    with self.assertRaises(exc):
                        call(producer)
                    self.assertLessEqual(producer.calls, 2)

    def test_a_reentrant_typeerror_naming_a_keyword_costs_linearly(self):
        # The bottom raises the TypeError an old producer gives for max_version; it comes out
        # of every level unchanged, and only the level that raised it is asked again.
        calls = []
        bottom = TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        for depth in (4, 8, 14):
            with self.subTest(depth=depth):
                del calls[:]
                with self.assertRaises(TypeError):
                    m.numel(Reentrant(depth, bottom, calls))
                self.assertLessEqual(len(calls), depth + 3)


class Classes(unittest.TestCase):
    """A class whose instances speak DLPack is not a tensor: it declines, so a later `object`
    overload takes it (its unbound __dlpack__ used to raise TypeError)."""

    def test_a_later_object_overload_takes_it(self):
        self.assertEqual(m.which(type(m.make(1))), "object")
        self.assertEqual(m.which(m.make(1)), "tensor")
        for peer, cls in ((np, "ndarray"), (torch, "Tensor")):
            if peer is not None:
                self.assertEqual(m.which(getattr(peer, cls)), "object")

    def test_explain_refusal_says_so(self):
        self.assertEqual(m.why_view(type(m.make(1))),
                         "tensor: Tensor is a class, not a DLPack object (pass an instance)")


class FreshModule(unittest.TestCase):
    """A dlpackpp::Error thrown as the very first call into a module, before any dlpackpp
    caster ran, is set_python_error's class all the same."""

    def test_first_call_translates(self):
        if NANOBIND:
            self.skipTest("nanobind: registered on the first dlpackpp caster call (its module "
                          "state exists only once NB_MODULE's body runs; docs/bindings.md)")
        done = run_fresh("""
            for read_only, cls in ((True, BufferError), (False, TypeError)):
                try:
                    m.throw_error(read_only)
                except cls as e:
                    assert str(e) == "dlpackpp: thrown by a bound function", e
                else:
                    raise SystemExit("no %s" % cls.__name__)
            print("ok")
        """)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr[-2000:])
        self.assertIn("ok", done.stdout)


class ExplainRefusal(unittest.TestCase):
    def test_interrupts_propagate_and_the_producer_is_asked_once(self):
        for why in (m.why_view, m.why_total, m.why_owned, m.why_legacy):
            for exc in (KeyboardInterrupt, SystemExit):
                with self.subTest(why=why.__name__, exc=exc):
                    producer = Raising(exc)
                    with self.assertRaises(exc):
                        why(producer)
                    self.assertEqual(producer.calls, 1)
            with self.subTest(why=why.__name__, exc="BufferError"):
                producer = Raising(BufferError("cannot export this"))
                self.assertIn("cannot export this", why(producer))
                # As its caster does, a read-only accessor asks for the cheaper legacy capsule
                # first and, refused with BufferError, once more with max_version.
                self.assertEqual(producer.calls, 2 if why is m.why_total else 1)

    def test_it_names_the_parameter_type(self):
        self.assertEqual(m.why_owned(m.make_read_only(3)), "")  # a ManagedTensor says READ_ONLY
        self.assertEqual(m.why_legacy(m.make_read_only(3)),
                         "tensor: got float64[3] read-only (a LegacyManagedTensor cannot say "
                         "READ_ONLY)")

    def test_nothing_is_printed_behind_the_callers_back(self):
        class Failing:
            def __getattr__(self, name):
                raise ValueError("no attribute " + name)

        seen = []
        hook, sys.unraisablehook = sys.unraisablehook, seen.append
        try:
            with self.assertRaisesRegex(ValueError, "no attribute __dlpack__"):
                m.why_view(Failing())
        finally:
            sys.unraisablehook = hook
        self.assertEqual(seen, [])


if __name__ == "__main__":
    run_tests()
