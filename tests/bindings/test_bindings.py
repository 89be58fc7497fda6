# SPDX-License-Identifier: Apache-2.0
"""The pybind11 and nanobind casters (bind_module.cpp, built as DLPACKPP_BIND_MODULE) against
whichever peers this interpreter has: NumPy 1.x (legacy protocol) or 2.x (versioned, READ_ONLY),
PyTorch 1.x (legacy) or 2.x (exchange table), JAX, and dlpackpp.Tensor itself. A peer that is
absent skips its tests; the script is skipped only when the module cannot be imported."""
import gc
import importlib
import os
import sys
import unittest

MODULE_NAME = os.environ.get("DLPACKPP_BIND_MODULE", "dlpackpp_bind_pybind11_pypi")
try:
    m = importlib.import_module(MODULE_NAME)
except ImportError as e:  # pragma: no cover - depends on the build
    print("DLPACKPP_TEST_SKIPPED: %s is not importable: %s" % (MODULE_NAME, e))
    sys.exit(0)
NANOBIND = "nanobind" in MODULE_NAME


def optional(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


np = optional("numpy")
torch = optional("torch")
jax = optional("jax")
jnp = optional("jax.numpy")
NUMPY2 = np is not None and int(np.__version__.split(".")[0]) >= 2
TORCH_TABLE = torch is not None and hasattr(torch.Tensor, "__dlpack_c_exchange_api__")
CUDA = torch is not None and torch.cuda.is_available()


class Wrapper:
    """Speaks DLPack only through __dlpack__ (no exchange table): imports own what they get."""

    def __init__(self, inner):
        self.inner = inner

    def __dlpack__(self, **kwargs):
        return self.inner.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.inner.__dlpack_device__()


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

    def test_view_through_the_exchange_table_is_read_only(self):
        t = m.make(5)
        self.assertEqual(m.numel(t), 5)
        self.assertEqual(m.describe(t), "float64[5] strides [1] cpu read_only")
        self.assertEqual(m.total(t), 10.0)  # a const accessor borrows too
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
        for probe in (m.probe, m.probe_optional, m.probe_variant, m.probe_optional_accessor):
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
        self.assertEqual(m.address(t), t.data_ptr())
        self.assertEqual(m.numel(t), 6)

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
    program = unittest.main(exit=False, verbosity=2)
    if program.result.testsRun == 0:
        print("error: no test ran")
        sys.exit(1)
    sys.exit(0 if program.result.wasSuccessful() else 1)
