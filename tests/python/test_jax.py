# SPDX-License-Identifier: Apache-2.0
"""JAX on CPU, with ml_dtypes: bfloat16 and fp8 tensors both ways (NumPy itself cannot
export ml_dtypes arrays through DLPack, JAX can)."""
import gc
import unittest

from support import LEGACY_HEADER, m, main, require, skip_script

np = require("numpy", "values are compared through NumPy")
ml_dtypes = require("ml_dtypes", "bfloat16 and fp8 element types (pip, see requirements.txt)")
jax = require("jax", "JAX on CPU is a DLPack peer (pip install 'jax[cpu]', see requirements.txt)")
import jax.numpy as jnp  # noqa: E402

# The comparisons read host memory: keep arrays on the CPU where a GPU backend is the default
# (test_cuda.py covers JAX on a GPU).
jax.config.update("jax_default_device", jax.devices("cpu")[0])

if LEGACY_HEADER:
    skip_script("the legacy-only subset (0.x dlpack.h) has no bfloat16/fp8 codes to test here")

DTYPES = ["float32", "float16", "int8", "int32", "uint8", "bool", "bfloat16", "float8_e4m3fn",
          "float8_e5m2"]


def numpy_dtype(name):
    return np.dtype(getattr(ml_dtypes, name)) if hasattr(ml_dtypes, name) else np.dtype(name)


class Jax(unittest.TestCase):
    def test_import_jax_arrays_of_every_dtype(self):
        for name in DTYPES:
            expected = (np.arange(12) % 5).astype(numpy_dtype(name)).reshape(3, 4)
            x = jnp.asarray(expected)
            self.assertEqual(x.dtype, expected.dtype, name)
            for info in (m.import_tensor(x), m.borrow(x)):
                self.assertEqual(info["dtype"], name)
                self.assertEqual(info["shape"], (3, 4))
                self.assertEqual(info["data"], expected.tobytes(), name)

    def test_export_to_jax_of_every_dtype(self):
        for name in DTYPES:
            expected = (np.arange(6) % 5).astype(numpy_dtype(name)).reshape(2, 3)
            gc.collect()
            start = m.deleter_count()
            x = jnp.from_dlpack(m.from_bytes(expected.tobytes(), (2, 3), name))
            self.assertEqual(x.dtype, expected.dtype, name)
            np.testing.assert_array_equal(np.asarray(x), expected)
            del x
            gc.collect()
            self.assertEqual(m.deleter_count(), start + 1, name)  # exactly once, copy or not

    def test_jax_computes_on_an_exported_tensor(self):
        x = jnp.from_dlpack(m.counted((2, 3)))
        self.assertEqual(float(jnp.sum(x * 2)), 30.0)


if __name__ == "__main__":
    main()
