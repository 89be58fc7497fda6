# SPDX-License-Identifier: Apache-2.0
"""Reading what a DLPack producer exports without trusting any framework's consumer: the
probe reads the capsule field by field and gathers its elements. host_copy is public
(dlpackpp.conformance.host_copy): an adapter's to_numpy for a framework whose own way to
NumPy loses a dtype (bfloat16, fp8) or copies through a consumer under test."""

from ._build import probe
from ._dtypes import numpy_dtype

READ_ONLY, IS_COPIED = 1, 2
HOST = (1, 3, 13)  # CPU, CUDA host, CUDA managed: memory this process can read


def host_values(capsule, fields=None):
    """The elements' bytes of a capsule in host-readable memory; None for device memory
    (reading a device pointer here would crash the child, not test the framework)."""
    p = probe()
    fields = p.read(capsule) if fields is None else fields
    if "device" not in fields:  # a versioned struct of another major: read up to its version
        raise ValueError("the capsule's tensor reads as DLPack %s.%s (freed, or of another "
                         "major): nothing past its version can be read"
                         % tuple(fields.get("version", ("?", "?"))))
    if tuple(fields["device"])[0] not in HOST:
        return None
    return p.gather(capsule)


def capsule_of(y):
    """y's capsule, versioned where its __dlpack__ takes max_version (else the legacy one)."""
    try:
        return y.__dlpack__(max_version=(1, 3))
    except TypeError:
        return y.__dlpack__()


def host_copy(y):
    """A numpy copy of any DLPack host array's values and dtype (bfloat16 and fp8 as
    ml_dtypes' types where installed, else unsigned integers of their width), read by the
    probe through y.__dlpack__; read-only where the export says READ_ONLY."""
    import numpy as np
    cap = capsule_of(y)
    p = probe()
    fields = p.read(cap)
    owned = p.consume(cap)
    data = host_values(owned, fields)
    if data is None:
        raise BufferError("device %s: not host memory" % (tuple(fields["device"]),))
    dtype = numpy_dtype(fields["dtype"])
    out = np.frombuffer(data, dtype=dtype).reshape(fields["shape"] or ()).copy()
    out.flags.writeable = not fields.get("flags", 0) & READ_ONLY  # as the export says
    return out
