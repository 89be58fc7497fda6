# SPDX-License-Identifier: Apache-2.0
"""PyTorch as producer and consumer. Debian's PyTorch 1.13 speaks only the legacy protocol
(its __dlpack__ rejects max_version), so the fallback runs for real; a PyTorch 2.x with
__dlpack_c_exchange_api__ takes the exchange path instead (the same assertions hold)."""
import gc
import sys
import unittest

from support import m, main, require

torch = require("torch", "PyTorch is the reference producer here (apt-get install python3-torch)")
np = require("numpy", "values are compared through NumPy")
from torch.utils import dlpack as torch_dlpack  # noqa: E402

def exports_bool():
    """PyTorch exchanges bool through DLPack from 2.0 on (Debian's 1.13 refuses it)."""
    try:
        torch_dlpack.to_dlpack(torch.zeros(1, dtype=torch.bool))
        return True
    except RuntimeError:
        return False


DTYPES = ([torch.bool] if exports_bool() else []) + [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8,
          torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64,
          torch.complex128]
NAMES = {torch.bool: "bool", torch.bfloat16: "bfloat16"}
TORCH_EXCHANGE = hasattr(torch.Tensor, "__dlpack_c_exchange_api__")


def name_of(dtype):
    return NAMES.get(dtype, str(dtype).replace("torch.", ""))


def raw_bytes(t):
    """The elements of `t` in logical order as bytes, NumPy-free for bfloat16."""
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return t.numpy().tobytes()


def layouts(dtype):
    base = (torch.arange(120) % 7).to(dtype).reshape(8, 15)
    return [
        ("contiguous", base),
        ("transposed", base.t()),
        ("sliced with steps", base[::2, 1::3]),
        ("non-contiguous view", base[:, ::2]),
        ("permuted 3-d", base.reshape(2, 4, 15).permute(2, 0, 1)),
        ("expanded (stride 0)", base[:1].expand(3, 15)),
        ("narrowed with offset", base.narrow(1, 5, 4)),
        ("0-d", base[1, 2].clone()),
        ("zero-size", base[:0]),
    ]


class Import(unittest.TestCase):
    def test_every_layout_and_dtype(self):
        for dtype in DTYPES:
            for name, t in layouts(dtype):
                where = "%s %s" % (dtype, name)
                before = sys.getrefcount(t)
                for info in (m.import_tensor(t), m.borrow(t)):
                    self.assertEqual(info["shape"], tuple(t.shape), where)
                    self.assertEqual(info["dtype"], name_of(dtype), where)
                    self.assertEqual(info["device"], "cpu", where)
                    self.assertEqual(info["data"], raw_bytes(t), where)
                    if t.numel() > 0:
                        for got, want, extent in zip(info["strides"], t.stride(), t.shape):
                            if extent > 1:
                                self.assertEqual(got, want, where)
                gc.collect()
                self.assertEqual(sys.getrefcount(t), before, where)  # deleter ran once

    @unittest.skipIf(TORCH_EXCHANGE, "this PyTorch speaks the versioned protocol")
    def test_torch_1_rejects_max_version_so_the_fallback_is_real(self):
        with self.assertRaises(TypeError):
            torch.arange(3).__dlpack__(max_version=(1, 0))

    def test_writes_go_through_to_torch_memory(self):
        t = torch.zeros(4, dtype=torch.float32)
        m.write_first(t[1:], 42.0)
        self.assertEqual(t.tolist(), [0.0, 42.0, 0.0, 0.0])

    def test_producer_refusals_come_back_unchanged(self):
        # stream=-1 (allowed for CPU) goes through __dlpack__, which refuses a tensor that
        # requires grad (PyTorch 1.x RuntimeError, 2.x BufferError).
        with self.assertRaisesRegex((RuntimeError, BufferError), "requires_grad|grad"):
            m.import_tensor(torch.zeros(2, requires_grad=True), stream=-1)

    def test_requires_grad_is_refused_wherever_it_could_be_written(self):
        # PyTorch's exchange table hands such a tensor over (it exports the data), so dlpackpp
        # asks requires_grad itself: an owning import and a writable borrow refuse it by
        # either route; a read-only borrow through the table takes it.
        t = torch.zeros(2, requires_grad=True)
        with self.assertRaisesRegex((RuntimeError, BufferError), "requires_grad|grad"):
            m.import_tensor(t)
        with self.assertRaisesRegex((RuntimeError, BufferError), "requires_grad|grad"):
            m.borrow_write(t.float(), 1.0, True)
        if TORCH_EXCHANGE and m.has_exchange_api():
            self.assertTrue(m.borrow(t)["read_only"])
        self.assertEqual(t.tolist(), [0.0, 0.0])
        self.assertEqual(m.import_tensor(t.detach())["shape"], (2,))


@unittest.skipUnless(TORCH_EXCHANGE, "this PyTorch has no __dlpack_c_exchange_api__ (before 2.x)")
@unittest.skipUnless(m.has_exchange_api(), "the legacy-only subset has no exchange API")
class ExchangePath(unittest.TestCase):
    """PyTorch 2.x publishes the DLPack exchange table: imports must take it, not __dlpack__."""

    def test_imports_never_call_dunder_dlpack(self):
        original = torch.Tensor.__dlpack__
        calls = []

        def refuse(self, *args, **kwargs):
            calls.append(kwargs)
            raise AssertionError("torch.Tensor.__dlpack__ must not be called")

        t = torch.arange(12, dtype=torch.float32).reshape(3, 4)[:, 1::2]
        torch.Tensor.__dlpack__ = refuse
        try:
            self.assertIsNotNone(m.exchange_api_of(t))
            owned = m.import_tensor(t)
            borrowed = m.borrow(t)
            m.write_first(t, 7.0)  # an owning import, written through
            with self.assertRaisesRegex(AssertionError, "must not be called"):
                m.import_tensor(t, stream=-1)  # the proof that the refusal is in force
        finally:
            torch.Tensor.__dlpack__ = original
        self.assertEqual(len(calls), 1)
        for info in (owned, borrowed):
            self.assertEqual(info["shape"], (3, 2))
            self.assertEqual(info["strides"], (4, 2))
            self.assertEqual(info["data"], raw_bytes(torch.arange(12.0).reshape(3, 4)[:, 1::2]))
        self.assertEqual(t[0, 0].item(), 7.0)


class Export(unittest.TestCase):
    def test_torch_imports_a_tensor_any_number_of_times(self):
        gc.collect()
        start = m.deleter_count()
        t = m.counted((4,), "float32")
        first = torch_dlpack.from_dlpack(t)
        second = torch_dlpack.from_dlpack(t)
        first[1] = 9.0
        self.assertEqual(second[1].item(), 9.0)  # one buffer
        del t, first
        gc.collect()
        self.assertEqual(m.deleter_count(), start)
        del second
        gc.collect()
        self.assertEqual(m.deleter_count(), start + 1)


    def test_torch_from_dlpack_sees_the_values_and_deletes_once(self):
        for dtype in ("float32", "float64", "int32", "int64"):
            gc.collect()
            start = m.deleter_count()
            t = torch_dlpack.from_dlpack(m.counted((2, 3), dtype))
            self.assertEqual(t.tolist(), [[0, 1, 2], [3, 4, 5]])
            self.assertEqual(str(t.dtype), "torch." + dtype)
            del t
            gc.collect()
            self.assertEqual(m.deleter_count(), start + 1)

    def test_every_dtype_torch_knows(self):
        for dtype in DTYPES:
            expected = (torch.arange(6) % 3).to(dtype).reshape(3, 2)
            t = torch_dlpack.from_dlpack(m.from_bytes(raw_bytes(expected), (3, 2), name_of(dtype)))
            self.assertEqual(t.dtype, dtype)
            self.assertTrue(torch.equal(t, expected), name_of(dtype))

    def test_a_capsule_from_to_capsule(self):
        gc.collect()
        start = m.deleter_count()
        t = torch_dlpack.from_dlpack(m.counted_capsule((4,), versioned=False))
        self.assertEqual(t.tolist(), [0, 1, 2, 3])
        del t
        gc.collect()
        self.assertEqual(m.deleter_count(), start + 1)


if __name__ == "__main__":
    main()
