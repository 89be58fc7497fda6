# SPDX-License-Identifier: Apache-2.0
"""CUDA tensors through the Python layer: PyTorch (exchange table and streams), CuPy and JAX.

Needs a CUDA device and at least one of those frameworks built with CUDA; the script skips
itself otherwise (CI has no GPU: run it on a machine with one)."""
import glob
import importlib
import os
import sys
import unittest

from support import LEGACY_HEADER, m, main, skip_script

# Asking the frameworks whether there is a device means importing them, which takes over a
# minute under the sanitizers' runtime: a Linux machine without an NVIDIA device node (or
# WSL's /dev/dxg) is answered without that.
if sys.platform.startswith("linux") and not (glob.glob("/dev/nvidia[0-9]*")
                                             or os.path.exists("/dev/dxg")):
    skip_script("no CUDA device on this machine (no /dev/nvidia* device node)")


def optional(name):
    try:
        return importlib.import_module(name)
    except Exception:  # pragma: no cover - depends on the machine
        return None


torch = optional("torch")
cupy = optional("cupy")
jax = optional("jax")

TORCH_CUDA = torch is not None and torch.cuda.is_available()
CUPY_CUDA = False
if cupy is not None:
    try:
        CUPY_CUDA = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # pragma: no cover - no driver
        CUPY_CUDA = False
JAX_CUDA = False
if jax is not None:
    try:
        JAX_CUDA = any(d.platform == "gpu" for d in jax.devices())
    except Exception:  # pragma: no cover - no CUDA backend
        JAX_CUDA = False

if LEGACY_HEADER:
    skip_script("the legacy-header module has no versioned imports to check on CUDA")
if not (TORCH_CUDA or CUPY_CUDA or JAX_CUDA):
    skip_script("no CUDA device with PyTorch, CuPy or JAX built for it")

KDL_CUDA = 2


@unittest.skipUnless(TORCH_CUDA, "PyTorch without CUDA")
class Torch(unittest.TestCase):
    def test_import_and_borrow_describe_the_device_tensor(self):
        t = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4).t()
        for d in (m.import_tensor(t), m.borrow(t)):
            self.assertEqual(d["shape"], (4, 3))
            self.assertEqual(d["strides"], (1, 4))
            self.assertEqual(d["dtype"], "float32")
            self.assertEqual(d["device"], "cuda:%d" % t.device.index)

    def test_reexport_shares_device_memory_both_ways(self):
        t = torch.zeros(5, device="cuda")
        r = m.reexport(t)
        self.assertEqual(r.__dlpack_device__(), (KDL_CUDA, t.device.index))
        back = torch.from_dlpack(r)
        self.assertEqual(back.device, t.device)
        back += 3
        torch.cuda.synchronize()
        self.assertEqual(t.cpu().tolist(), [3.0] * 5)
        again = torch.from_dlpack(r)  # exported any number of times
        self.assertEqual(again.data_ptr(), back.data_ptr())

    def test_current_stream_is_torchs(self):
        t = torch.ones(3, device="cuda")
        if m.exchange_api_of(t) is None:
            self.skipTest("this PyTorch publishes no exchange table")
        index = t.device.index
        self.assertEqual(m.current_stream(t, KDL_CUDA, index),
                         torch.cuda.current_stream(index).cuda_stream)
        side = torch.cuda.Stream(device=index)
        with torch.cuda.stream(side):
            self.assertEqual(m.current_stream(t, KDL_CUDA, index), side.cuda_stream)

    def test_dlpack_arguments_on_a_cuda_tensor(self):
        r = m.reexport(torch.ones(2, device="cuda"))
        stream = torch.cuda.current_stream().cuda_stream or 1
        self.assertIsNotNone(r.__dlpack__(stream=stream))  # any integer stream on CUDA
        with self.assertRaises(TypeError):
            r.__dlpack__(stream=object())
        with self.assertRaises((BufferError, ValueError)):
            r.__dlpack__(copy=True)  # dlpackpp.Tensor copies host memory only

    def test_import_with_a_stream_synchronizes_through_dlpack(self):
        t = torch.full((4,), 7.0, device="cuda")
        # The spec's stream numbers: 0 is ambiguous and refused, 1 is the legacy default stream.
        d = m.import_tensor(t, stream=torch.cuda.current_stream().cuda_stream or 1)
        self.assertEqual(d["device"], "cuda:%d" % t.device.index)


@unittest.skipUnless(CUPY_CUDA, "CuPy without a CUDA device")
class CuPy(unittest.TestCase):
    def test_import_through_dlpack(self):
        a = cupy.arange(6, dtype=cupy.float64).reshape(2, 3)
        for d in (m.import_tensor(a), m.borrow(a), m.import_tensor(a, stream=1)):
            self.assertEqual(d["shape"], (2, 3))
            self.assertEqual(d["dtype"], "float64")
            self.assertTrue(d["device"].startswith("cuda:"), d["device"])

    def test_reexport_into_cupy_shares_memory(self):
        a = cupy.zeros(4, dtype=cupy.float32)
        b = cupy.from_dlpack(m.reexport(a))
        b += 2
        cupy.cuda.runtime.deviceSynchronize()
        self.assertEqual(a.get().tolist(), [2.0] * 4)


@unittest.skipUnless(JAX_CUDA, "JAX without a GPU backend")
class Jax(unittest.TestCase):
    def test_import_a_gpu_array(self):
        x = jax.numpy.arange(8, dtype=jax.numpy.float32).reshape(2, 4)
        x.block_until_ready()
        d = m.import_tensor(x)
        self.assertEqual(d["shape"], (2, 4))
        self.assertEqual(d["dtype"], "float32")
        self.assertTrue(d["device"].startswith("cuda:"), d["device"])


if __name__ == "__main__":
    main()
