# SPDX-License-Identifier: Apache-2.0
"""P9's GPU half with dlpackpp itself (run on a CUDA machine: see docs/conformance.md): the
built-in `dlpackpp` target (dlpackpp.Tensor handed over with its producer's stream by
python/cuda.hpp), or, where $DLPACKPP_CONFORMANCE_FAULT is P9, the same update handed over
with to_pyobject(tensor) and no stream, as if the kernel had finished: __dlpack__ then
ignores the consumer's `stream`, the consumer's stream reads values still being written, and
the kit must fail P9."""
import os

from dlpackpp.conformance._build import cuda_probe
from dlpackpp.conformance._targets import Dlpackpp

BROKEN = os.environ.get("DLPACKPP_CONFORMANCE_FAULT") == "P9"
NAME = "broken-dlpackpp-P9" if BROKEN else "conforming-dlpackpp-P9"

from_numpy = Dlpackpp.from_numpy
cuda_array = Dlpackpp.cuda_array


def slow_update(x):
    """x + 1 queued behind a long kernel on a stream of its own; handed over with that stream
    (conforming) or without it (the fault)."""
    return cuda_probe().slow_update(x, not BROKEN)
