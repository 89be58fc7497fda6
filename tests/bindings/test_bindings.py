# SPDX-License-Identifier: Apache-2.0
"""The pybind11 and nanobind casters (bind_module.cpp, built as DLPACKPP_BIND_MODULE) against
whichever peers this interpreter has: NumPy 1.x (legacy protocol) or 2.x (versioned, READ_ONLY),
PyTorch 1.x (legacy) or 2.x (exchange table), JAX, and dlpackpp.Tensor itself. A peer that is
absent skips its tests; the script is skipped only when the module cannot be imported."""
import gc
import sys
import unittest

from bind_support import (CUDA, NANOBIND, NUMPY2, TORCH_TABLE, OneCapsule, Raising, Reentrant,
                          Wrapper, jax, jnp, m, np, run_tests, torch)


def doc(name):
    return getattr(m, name).__doc__ or ""


class Core(unittest.TestCase):
    """Against dlpackpp.Tensor (exchange table) and a __dlpack__-only wrapper of it."""

    def test_return_value_is_a_dlpackpp_tensor(self):
        t = m.make(4)
        self.assertEqual(type(t).__name__, "Tensor")
        self.assertEqual(t.shape, (4,))
        self.assertEqual(t.dtype, "float64")
        self.assertIn("-> dlpackpp.Tensor" if m.io_names else "-> tensor", doc("make"))

    def test_deleter_runs_once_when_the_result_dies(self):
        before = m.released()
        t = m.make(3)
        self.assertEqual(m.released(), before)
        del t
        gc.collect()
        self.assertEqual(m.released(), before + 1)

    def test_a_dlpackpp_tensor_is_read_in_place_with_its_flags(self):
        t = m.make(5)
        self.assertEqual(m.numel(t), 5)
        self.assertEqual(m.describe(t), "float64[5] strides [1] cpu")
        self.assertEqual(m.describe(m.make_read_only(2)), "float64[2] strides [1] cpu read_only")
        self.assertEqual(m.total(t), 10.0)
        m.fill_(t, 3.0)  # written in place
        self.assertEqual(m.total(t), 15.0)
        self.assertFalse(t.exported)  # borrowing leaves the tensor with its owner

    def test_view_of_an_owning_import_has_the_producers_flags(self):
        before = m.released()
        self.assertEqual(m.describe(Wrapper(m.make(3))), "float64[3] strides [1] cpu")
        gc.collect()
        self.assertEqual(m.released(), before + 1)  # released after the call, once

    def test_what_each_parameter_asks_of_dunder_dlpack(self):
        # A const accessor only reads: the legacy capsule first (cheaper for producers); a
        # TensorView or a mutable accessor needs the flags, so max_version. A producer that
        # refuses the legacy request (as NumPy 2 does for a read-only array) is asked again.
        class Recording(Wrapper):
            def __init__(self, inner, refuse_legacy=False):
                super().__init__(inner)
                self.asked = []
                self.refuse_legacy = refuse_legacy

            def __dlpack__(self, **kwargs):
                self.asked.append("max_version" in kwargs)
                if self.refuse_legacy and "max_version" not in kwargs:
                    raise BufferError("no legacy export")
                return super().__dlpack__(**kwargs)

        x = Recording(m.make(3))
        self.assertEqual(m.total(x), 3.0)
        self.assertEqual(x.asked, [False])
        self.assertTrue(m.describe(x).startswith("float64[3]"))
        self.assertEqual(x.asked, [False, True])
        strict = Recording(m.make_read_only(3), refuse_legacy=True)
        self.assertEqual(m.total(strict), 3.0)
        self.assertEqual(strict.asked, [False, True])
        with self.assertRaises(TypeError):  # READ_ONLY, known through max_version
            m.fill_(strict, 1.0)
        self.assertEqual(strict.asked[-1], True)

    def test_owning_argument_takes_ownership(self):
        t = m.make(6)
        before = m.released()
        # Every export of a dlpackpp.Tensor shares its tensor: the argument's reset drops its
        # share, and the producer's deleter runs once, when the object is gone too.
        self.assertEqual(m.released_during(t), 0)
        self.assertEqual(m.released(), before)
        del t
        gc.collect()
        self.assertEqual(m.released(), before + 1)
        self.assertEqual(m.owned(m.make(2)), (2, False))
        self.assertEqual(m.owned(m.make_read_only(2)), (2, True))
        self.assertEqual(m.owned_legacy(m.make(7)), 7)

    def test_legacy_handle_refuses_read_only(self):
        with self.assertRaises(TypeError):
            m.owned_legacy(m.make_read_only(2))

    def test_mutable_accessor_refuses_read_only(self):
        with self.assertRaises(TypeError):
            m.fill_(m.make_read_only(3), 1.0)
        with self.assertRaises(TypeError):
            m.fill_(Wrapper(m.make_read_only(3)), 1.0)

    def test_imports_stay_valid_for_the_whole_call(self):
        # By value (kept with the call), read in place (kept by the caster), and inside
        # optional/variant casters (which destroy the inner caster before the call).
        for probe in (m.probe, m.probe_ref, m.probe_pointer, m.probe_accessor_ref, m.probe_optional,
                      m.probe_variant, m.probe_optional_accessor):
            with self.subTest(probe=probe.__name__):
                before = m.released()
                # An owning import: released after the call, never inside it.
                self.assertEqual(probe(Wrapper(m.make(4))), (6.0, before))
                gc.collect()
                self.assertEqual(m.released(), before + 1)
        before = m.released()
        self.assertEqual(m.probe_list([Wrapper(m.make(4)), Wrapper(m.make(3))]), (9.0, before))
        gc.collect()
        self.assertEqual(m.released(), before + 2)
        self.assertEqual(m.probe_optional(None)[0], -1.0)
        self.assertEqual(m.probe_variant(9)[0], 9.0)

    def test_library_cast_inside_a_bound_function(self):
        self.assertEqual(m.cast_view(m.make(3)), 3)  # a borrow needs no owner
        # An owning import needs the call to keep it: pybind11's py::cast has the call's
        # frame; nanobind's nb::cast releases its cleanup list at once, so it declines.
        self.assertEqual(m.cast_view(Wrapper(m.make(3))), -1 if NANOBIND else 3)
        self.assertEqual(m.cast_view(1.5), -1)

    def test_legacy_exports_import(self):
        legacy = m.make_legacy(3)
        self.assertEqual(m.numel(Wrapper(legacy)), 3)

    def test_signatures_name_what_parameters_take(self):
        self.assertIn("float32[*, *] writable", doc("scale_"))
        self.assertIn("float64[*, *] writable", doc("scale_"))
        self.assertIn("float32[*]", doc("rank"))
        self.assertIn("float32[*, *]", doc("rank"))
        self.assertIn("float64[*] writable", doc("access"))
        self.assertIn("tensor", doc("describe"))

    def test_declines_leave_no_error_and_no_reference(self):
        self.assertEqual(m.mixed(1.5), "number")
        self.assertEqual(m.mixed("x"), "text")
        self.assertEqual(m.mixed(m.make(2)), "tensor")
        from fractions import Fraction
        self.assertEqual(m.mixed(Fraction(1, 2)), "number")  # declined as a tensor first
        o = object()
        refs = sys.getrefcount(o)
        for _ in range(3):
            with self.assertRaises(TypeError) as caught:
                m.describe(o)
            del caught
        self.assertEqual(sys.getrefcount(o), refs)

    def test_error_is_the_binding_librarys_type_error(self):
        with self.assertRaises(TypeError) as caught:
            m.scale_(m.make(4), 2.0)  # float64 but 1-d
        self.assertIn("incompatible function arguments", str(caught.exception))
        self.assertIn("float64[*, *] writable", str(caught.exception))


class Lifetime(unittest.TestCase):
    """What a view or accessor parameter reads stays owned by the call (it once stayed in the
    producer's capsule, unconsumed, where a second consumer could take and free it: ASan
    heap-use-after-free, and for a mutable accessor a write after free)."""

    def one_capsule(self, n):
        t = m.make(n)
        producer = OneCapsule(t.__dlpack__(max_version=(1, 0)))
        del t  # the capsule's export is the tensor's last owner
        gc.collect()
        return producer

    def check(self, call, expected, second_consumer):
        producer = self.one_capsule(4)
        before = m.released()
        taken = []

        def steal():
            try:
                taken.append(second_consumer(producer))
            except (TypeError, ValueError, BufferError, RuntimeError) as e:
                taken.append(type(e))

        result = call(producer, steal)
        self.assertEqual(result, expected(before))
        self.assertEqual(len(taken), 1)
        self.assertTrue(isinstance(taken[0], type) and issubclass(taken[0], Exception), taken)
        self.assertEqual(m.released(), before)
        del producer
        gc.collect()
        self.assertEqual(m.released(), before + 1)

    def test_a_second_consumer_cannot_take_what_a_view_reads(self):
        self.check(m.probe_calling, lambda before: (6.0, before), m.owned)
        self.check(m.probe_ref_calling, lambda before: (6.0, before), m.owned)
        self.check(m.total_calling, lambda before: (6.0, before), m.owned)
        self.check(lambda p, f: m.fill_calling(p, 2.0, f), lambda before: before, m.owned)

    @unittest.skipIf(np is None, "NumPy is not importable")
    def test_numpy_cannot_take_it_either(self):
        self.check(m.probe_calling, lambda before: (6.0, before), np.from_dlpack)
        self.check(lambda p, f: m.fill_calling(p, 2.0, f), lambda before: before, np.from_dlpack)


class Propagation(unittest.TestCase):
    """Only "this argument does not fit" declines; anything else the producer raises
    propagates unchanged, and is not asked again."""

    CALLS = {
        "TensorView": lambda x: m.describe(x),
        "const accessor": lambda x: m.total(x),
        "mutable accessor": lambda x: m.fill_(x, 1.0),
        "ManagedTensor": lambda x: m.owned(x),
        "overloads": lambda x: m.rank(x),
    }

    def test_interrupts_and_errors_propagate(self):
        for exc in (KeyboardInterrupt, SystemExit, MemoryError, RecursionError,
                    ValueError("the producer's own")):
            for kind, call in self.CALLS.items():
                with self.subTest(exc=exc, kind=kind):
                    producer = Raising(exc)
                    expected = exc if isinstance(exc, type) else type(exc)
                    with self.assertRaises(expected) as caught:
                        call(producer)
                    if not isinstance(exc, type):
                        self.assertIs(caught.exception, exc)
                    self.assertEqual(producer.calls, 1)

    def test_refusals_decline(self):
        for kind, call in self.CALLS.items():
            with self.subTest(kind=kind):
                with self.assertRaisesRegex(TypeError, "incompatible function arguments"):
                    call(Raising(BufferError("cannot export this")))
                with self.assertRaisesRegex(TypeError, "incompatible function arguments"):
                    call(object())

    def test_a_reentrant_producer_costs_linearly(self):
        # Each level's __dlpack__ calls the bound function on the next level; the bottom does
        # not fit. The inner "incompatible function arguments" TypeError propagates (it is not
        # a refusal of max_version): each level is asked once, not 2-4 times.
        calls = []
        for kind, call in self.CALLS.items():
            for depth in (4, 8, 12):
                with self.subTest(kind=kind, depth=depth):
                    del calls[:]
                    with self.assertRaises(TypeError):
                        call(Reentrant(depth, BufferError("the bottom does not fit"), calls))
                    self.assertLessEqual(len(calls), depth + 4)


class Errors(unittest.TestCase):
    """A dlpackpp::Error thrown by a bound function reaches Python as set_python_error's class
    with its message (the casters' header registers the translation)."""

    def test_classes_and_messages(self):
        with self.assertRaisesRegex(TypeError, r"^dlpackpp: dtype is float64, required float32"):
            m.require_float32(m.make(3))
        with self.assertRaisesRegex(TypeError, r"^dlpackpp: ndim is 1, required 2"):
            m.require_rank(m.make(3), 2)
        with self.assertRaisesRegex(BufferError, r"^dlpackpp: .*read"):
            m.require_writable(m.make_read_only(3))
        with self.assertRaisesRegex(ValueError, r"^dlpackpp: .*nowhere"):
            m.parse_device(m.make(1), "nowhere")


class Refusals(unittest.TestCase):
    """explain_refusal: why an object would not fit a parameter ("" when it fits)."""

    def test_what_each_parameter_says(self):
        self.assertEqual(m.why_view(m.make(3)), "")
        self.assertEqual(m.why_total(m.make(3)), "")
        self.assertEqual(m.why_total(m.make_read_only(3)), "")
        self.assertEqual(m.why_owned(m.make(3)), "")
        self.assertEqual(m.why_scale(m.make(4)), "float32[*, *] writable: got float64[4]")
        self.assertEqual(m.why_total(m.make_legacy(2)), "")
        self.assertEqual(m.why_view(1.5), "tensor: float is not a DLPack object")
        self.assertEqual(m.why_scale(object()),
                         "float32[*, *] writable: object is not a DLPack object")
        self.assertRegex(m.why_owned(Raising(BufferError("no export"))),
                         r"^tensor: Raising.__dlpack__ raised BufferError: no export")
        self.assertEqual(m.released(), m.released())  # nothing imported is kept

    @unittest.skipIf(np is None, "NumPy is not importable")
    def test_numpy(self):
        a = np.ones((4, 4))
        self.assertEqual(m.why_scale(a), "float32[*, *] writable: got float64[4, 4]")
        self.assertEqual(m.why_scale(np.ones((4, 4), np.float32)), "")
        self.assertEqual(m.why_scale(np.ones(4, np.float32)), "float32[*, *] writable: got float32[4]")
        if NUMPY2:
            b = np.ones((4, 4), np.float32)
            b.flags.writeable = False
            self.assertEqual(m.why_scale(b), "float32[*, *] writable: got float32[4, 4] read-only")


@unittest.skipIf(np is None, "NumPy is not importable")
class NumPy(unittest.TestCase):
    def test_view_is_zero_copy(self):
        a = np.arange(12, dtype=np.float32).reshape(3, 4)
        self.assertEqual(m.describe(a), "float32[3, 4] strides [4, 1] cpu")
        self.assertEqual(m.address(a), a.ctypes.data)
        self.assertEqual(m.describe(a[:, ::2]), "float32[3, 2] strides [4, 2] cpu")

    def test_overload_by_dtype_writes_in_place(self):
        a = np.ones((2, 3), dtype=np.float32)
        b = np.ones((2, 3), dtype=np.float64)
        self.assertEqual(m.scale_(a, 3.0), "float32")
        self.assertEqual(m.scale_(b, 4.0), "float64")
        self.assertTrue((a == 3).all() and (b == 4).all())
        with self.assertRaises(TypeError):
            m.scale_(np.ones((2, 3), dtype=np.int32), 2.0)

    def test_overload_by_rank(self):
        self.assertEqual(m.rank(np.zeros(3, dtype=np.float32)), "1-d")
        self.assertEqual(m.rank(np.zeros((2, 2), dtype=np.float32)), "2-d")
        self.assertEqual(m.rank(np.zeros((2, 2, 2), dtype=np.float32)), "other")
        self.assertEqual(m.rank(np.zeros(3, dtype=np.float64)), "other")

    def test_strided_accessor(self):
        a = np.arange(10, dtype=np.float64)
        self.assertEqual(m.total(a[::3]), 0 + 3 + 6 + 9)

    @unittest.skipUnless(NUMPY2, "NumPy 1.x refuses to export a read-only array at all")
    def test_read_only_array_goes_to_the_const_overload(self):
        a = np.arange(4, dtype=np.float64)
        self.assertEqual(m.access(a), "writable")
        a.flags.writeable = False
        self.assertEqual(m.access(a), "read-only")
        with self.assertRaises(TypeError):
            m.fill_(a, 1.0)
        self.assertEqual(m.total(a), 6.0)
        self.assertTrue(m.describe(a).endswith("read_only"))

    def test_overlapping_writes_are_refused(self):
        a = np.lib.stride_tricks.as_strided(np.ones(3, np.float32), (4, 3), (0, 4))
        with self.assertRaisesRegex(TypeError, "incompatible function arguments"):
            m.scale_(a, 2.0)
        self.assertEqual(a.tolist(), [[1.0, 1.0, 1.0]] * 4)
        self.assertEqual(m.rank(a), "2-d")
        self.assertIn("elements overlap", m.why_scale(a))

    def test_refcounts_are_balanced(self):
        a = np.arange(8, dtype=np.float64)
        refs = sys.getrefcount(a)
        for _ in range(50):
            m.describe(a)
            m.total(a)
            m.probe_optional(a)
            m.probe_variant(a)
            m.rank(a)  # declined twice (float32 overloads), then a view
            m.owned(a)
            with self.assertRaises(TypeError):
                m.scale_(a, 1.0)
        gc.collect()
        self.assertEqual(sys.getrefcount(a), refs)

    def test_imports_stay_valid_for_the_whole_call(self):
        a = np.arange(5, dtype=np.float64)
        for probe in (m.probe, m.probe_optional, m.probe_variant, m.probe_optional_accessor):
            with self.subTest(probe=probe.__name__):
                self.assertEqual(probe(a)[0], 10.0)

    def test_result_goes_back_to_numpy(self):
        before = m.released()
        b = np.from_dlpack(m.make(4))
        self.assertEqual(b.tolist(), [0.0, 1.0, 2.0, 3.0])
        del b
        gc.collect()
        self.assertEqual(m.released(), before + 1)


@unittest.skipIf(torch is None, "PyTorch is not importable")
class Torch(unittest.TestCase):
    def test_view_and_accessors(self):
        t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
        self.assertEqual(m.address(t), t.data_ptr())
        self.assertEqual(m.numel(t), 6)
        self.assertEqual(m.rank(t), "2-d")
        self.assertEqual(m.scale_(t, 2.0), "float32")
        self.assertEqual(t.tolist(), [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]])
        self.assertEqual(m.scale_(torch.ones(2, 2, dtype=torch.float64), 2.0), "float64")

    def test_writability_follows_the_path(self):
        t = torch.arange(3, dtype=torch.float64)
        # Borrowed through the exchange table (PyTorch 2.x): READ_ONLY, the table cannot say.
        self.assertEqual(m.describe(t).endswith("read_only"), TORCH_TABLE)
        self.assertEqual(m.access(t), "writable")  # a mutable accessor imports with ownership
        m.fill_(t, 5.0)
        self.assertEqual(t.tolist(), [5.0, 5.0, 5.0])

    def test_borrowed_views_stay_valid_for_the_whole_call(self):
        # Through the exchange table (PyTorch 2.x) a caster's view reads the DLTensor the table
        # filled inside the caster: in place for a parameter read in place, its own copy once
        # moved out (by value, and inside optional/variant/list casters, which destroy the inner
        # caster before the call: ASan sees a view left reading it).
        t = torch.arange(4, dtype=torch.float64)
        for probe in (m.probe, m.probe_ref, m.probe_pointer, m.probe_accessor_ref, m.probe_optional,
                      m.probe_variant, m.probe_optional_accessor):
            with self.subTest(probe=probe.__name__):
                self.assertEqual(probe(t)[0], 6.0)
        self.assertEqual(m.probe_list([t, torch.arange(3, dtype=torch.float64)])[0], 9.0)
        for probe in (m.probe, m.probe_ref, m.probe_optional, m.probe_variant):  # strides kept
            with self.subTest(probe=probe.__name__, strided=True):
                self.assertEqual(probe(t[::2])[0], 2.0)
        self.assertIn("float64[2] strides [2]", m.describe(t[::2]))

    def test_refcounts_are_balanced(self):
        t = torch.arange(4, dtype=torch.float64)
        refs = sys.getrefcount(t)
        for _ in range(50):
            m.describe(t)
            m.total(t)
            m.probe_optional(t)
            m.owned(t)
            m.rank(t)
        gc.collect()
        self.assertEqual(sys.getrefcount(t), refs)

    def test_requires_grad_is_refused_where_it_could_be_written(self):
        # Writing into a tensor that requires grad would bypass autograd: torch's own
        # __dlpack__ refuses it (RuntimeError: PyTorch 1.x has no exchange table, so every
        # parameter meets that); through the exchange table, owning and writable parameters
        # decline it and read-only ones take it.
        t = torch.arange(3, dtype=torch.float64, requires_grad=True)
        if TORCH_TABLE:
            self.assertEqual(m.describe(t), "float64[3] strides [1] cpu read_only")
            self.assertEqual(m.total(t), 3.0)
            self.assertEqual(m.access(t), "read-only")
            for call in (lambda: m.fill_(t, 5.0), lambda: m.owned(t)):
                with self.assertRaisesRegex(TypeError, "incompatible function arguments"):
                    call()
            self.assertIn("requires grad", m.why_owned(t))
            self.assertIn("requires grad", m.why_scale(t.float().reshape(3, 1)))
        else:
            for call in (lambda: m.describe(t), lambda: m.fill_(t, 5.0), lambda: m.owned(t)):
                with self.assertRaisesRegex(RuntimeError, "require"):
                    call()
        self.assertEqual(t.tolist(), [0.0, 1.0, 2.0])
        self.assertEqual(m.fill_(t.detach(), 5.0), None)
        self.assertEqual(t.tolist(), [5.0, 5.0, 5.0])

    def test_overlapping_writes_are_refused(self):
        # expand() makes a stride of 0: every element of a column is one address, so writing
        # each would write one number four times. A mutable accessor declines it (as
        # PyTorch's in-place operations refuse it); reading is fine.
        t = torch.ones(1, 3).expand(4, 3)
        with self.assertRaisesRegex(TypeError, "incompatible function arguments"):
            m.scale_(t, 2.0)
        self.assertEqual(t.tolist(), [[1.0, 1.0, 1.0]] * 4)
        self.assertEqual(m.rank(t), "2-d")
        self.assertRegex(m.why_scale(t), r"^float32\[\*, \*\] writable: got float32\[4, 3\]; "
                                         r"strides\[0\] is 0 over extent 4: elements overlap")

    def test_result_goes_back_to_torch(self):
        before = m.released()
        u = torch.from_dlpack(m.make(3))
        self.assertEqual(u.tolist(), [0.0, 1.0, 2.0])
        del u
        gc.collect()
        self.assertEqual(m.released(), before + 1)


@unittest.skipUnless(CUDA, "no CUDA device for PyTorch")
class Cuda(unittest.TestCase):
    def test_view_of_device_memory(self):
        t = torch.arange(6, dtype=torch.float32, device="cuda").reshape(2, 3)
        self.assertTrue(m.describe(t).startswith("float32[2, 3] strides [3, 1] cuda:"), m.describe(t))
        # Read in place, and moved out of an inner caster that dies before the call.
        self.assertEqual(m.describe_ref(t), m.describe(t))
        self.assertEqual(m.describe_optional(t), m.describe(t))
        self.assertEqual(m.address(t), t.data_ptr())
        self.assertEqual(m.numel(t), 6)

    def test_on_stream_is_pytorchs_current_stream(self):
        # PyTorch's exchange table reports its current stream; without the table the legacy
        # default stream (1) is asked for. Either way PyTorch is asked with that stream.
        x = torch.ones(3, dtype=torch.float64, device="cuda")
        side = torch.cuda.Stream()
        for stream in (torch.cuda.current_stream(), side):
            with torch.cuda.stream(stream):
                expected = (stream.cuda_stream or 1) if TORCH_TABLE else 1
                self.assertEqual(m.on_producer_stream(x)[0], expected)
                self.assertEqual(m.on_test_stream_fill(x.cpu())[0], 0)  # host memory: none

    def test_accessors_decline_device_memory(self):
        t = torch.ones(2, 2, device="cuda")
        with self.assertRaises(TypeError):  # the accessor would be indexed on the host
            m.scale_(t, 2.0)
        self.assertEqual(m.rank(t), "other")  # the const accessors decline, TensorView fits
        self.assertEqual(t.cpu().tolist(), [[1.0, 1.0], [1.0, 1.0]])

    def test_owning_import_and_refcounts(self):
        t = torch.ones(5, device="cuda")
        refs = sys.getrefcount(t)
        for _ in range(20):
            self.assertEqual(m.owned(t), (5, False))
            m.describe(t)
        gc.collect()
        self.assertEqual(sys.getrefcount(t), refs)


class Recorder:
    """A producer without the exchange table that says it lives on `device` and records the
    keywords each __dlpack__ call gets (the stream is the consumer's business, so it is not
    passed on)."""

    def __init__(self, inner, device):
        self.inner, self.device, self.calls = inner, device, []

    def __dlpack__(self, **kwargs):
        self.calls.append(dict(kwargs))
        kwargs.pop("stream", None)
        return self.inner.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.device


class OnStream(unittest.TestCase):
    """OnStream<V, Stream>: the stream the bound function launches on, and the producer asked
    to order its work before it. Without a GPU: the tensors claim a CUDA device over host memory
    and are never read there."""

    KDL_CUDA, KDL_ROCM, TEST_STREAM, LEGACY = 2, 10, 0x5000, 1

    def test_a_host_tensor_has_no_stream(self):
        t = m.make(3)
        self.assertEqual(m.on_producer_stream(t)[0], 0)
        self.assertEqual(m.on_test_stream(t)[0], 0)
        r = Recorder(m.make(3), (1, 0))
        self.assertEqual(m.on_test_stream(r)[0], 0)
        self.assertNotIn("stream", r.calls[-1])  # a CPU producer is never given one

    def test_the_authors_stream_is_asked_for(self):
        r = Recorder(m.make_on(3, self.KDL_CUDA), (self.KDL_CUDA, 0))
        stream, text = m.on_test_stream(r)
        self.assertEqual(stream, self.TEST_STREAM)
        self.assertEqual(r.calls, [{"max_version": r.calls[0]["max_version"],
                                    "stream": self.TEST_STREAM}])
        self.assertIn("cuda:0", text)
        for f in (m.on_test_stream_fill, m.on_test_stream_owned, m.on_test_stream_optional):
            r.calls.clear()
            stream, _ = f(r)
            self.assertEqual(stream, self.TEST_STREAM)
            self.assertEqual([c.get("stream") for c in r.calls], [self.TEST_STREAM])

    def test_a_producer_without_the_table_gives_the_legacy_default_stream(self):
        r = Recorder(m.make_on(3, self.KDL_CUDA), (self.KDL_CUDA, 0))
        self.assertEqual(m.on_producer_stream(r)[0], self.LEGACY)
        self.assertEqual([c.get("stream") for c in r.calls], [self.LEGACY])
        rocm = Recorder(m.make_on(3, self.KDL_ROCM), (self.KDL_ROCM, 0))
        self.assertEqual(m.on_producer_stream(rocm)[0], 0)  # ROCm's default stream is 0
        self.assertEqual([c.get("stream") for c in rocm.calls], [0])

    def test_a_table_producer_gives_its_current_work_stream(self):
        t = m.make_on(3, self.KDL_CUDA)
        m.set_work_stream(self.KDL_CUDA, 0xBEEF)
        try:
            self.assertEqual(m.on_producer_stream(t)[0], 0xBEEF)
            self.assertEqual(m.on_producer_stream_ref(t)[0], 0xBEEF)
        finally:
            m.set_work_stream(self.KDL_CUDA, 0)
        self.assertEqual(m.on_producer_stream(t)[0], self.LEGACY)  # its default stream
        self.assertFalse(t.exported)  # read in place: no __dlpack__ call

    def test_refusals_decline_and_errors_propagate(self):
        class NoDevice:
            def __dlpack__(self, **kwargs):
                raise AssertionError("asked without a device")

        class Interrupting(Recorder):
            def __dlpack_device__(self):
                raise KeyboardInterrupt

        for bad in (NoDevice(), 1.5, "text", Recorder(m.make(3), "cpu")):
            with self.assertRaises(TypeError):
                m.on_test_stream(bad)
        self.assertEqual(m.on_test_stream_optional(None), (0, "none"))
        with self.assertRaises(KeyboardInterrupt):
            m.on_test_stream(Interrupting(m.make(3), (1, 0)))
        # A mutable accessor still refuses a read-only tensor, whatever the stream.
        with self.assertRaises(TypeError):
            m.on_test_stream_fill(Recorder(m.make_read_only(3), (self.KDL_CUDA, 0)))

    def test_explain_refusal_says_what_the_caster_does(self):
        cuda = Recorder(m.make_on(3, self.KDL_CUDA), (self.KDL_CUDA, 0))
        self.assertEqual(m.why_on_stream_fill(cuda), "")  # device memory fits here
        self.assertEqual(m.why_on_stream_fill(Recorder(m.make_read_only(3), (1, 0))),
                         "float64[*] writable: got float64[3] read-only")
        self.assertIn("__dlpack_device__", m.why_on_stream_fill(OneCapsule(m.make(3).__dlpack__())))
        self.assertIn("on cuda:0", m.why_total(cuda))  # a plain accessor: host memory only

    def test_signatures_name_what_the_value_takes(self):
        self.assertIn("float64[*] writable", m.on_test_stream_fill.__doc__)


@unittest.skipIf(jnp is None, "JAX is not importable")
class Jax(unittest.TestCase):
    def setUp(self):
        # Host memory is what these describe: keep arrays on the CPU where a GPU backend is
        # JAX's default (the Cuda class covers device tensors).
        self.device = jax.default_device(jax.devices("cpu")[0])
        self.device.__enter__()

    def tearDown(self):
        self.device.__exit__(None, None, None)

    def test_read_only_parameters(self):
        x = jnp.arange(6, dtype=jnp.float32).reshape(2, 3)
        self.assertTrue(m.describe(x).startswith("float32[2, 3] strides [3, 1] cpu"))
        self.assertEqual(m.rank(x), "2-d")
        self.assertEqual(m.total(jnp.asarray(np.arange(4, dtype=np.float64))
                                 if jnp.asarray(np.zeros(1)).dtype == np.float64
                                 else np.arange(4, dtype=np.float64)), 6.0)
        with self.assertRaises(TypeError):  # float32 is not float64
            m.total(jnp.arange(4, dtype=jnp.float32))


if __name__ == "__main__":
    run_tests()
