# SPDX-License-Identifier: Apache-2.0
"""An adapter for the kit's robustness test that cannot be loaded, as
$DLPACKPP_CONFORMANCE_LOAD says: `crash` (SIGSEGV on import), `hang` (prints for ever) or
`raise` (an exception). The kit exits 2 with one line naming this file and what happened."""
import ctypes
import os
import time

NAME = "unloadable"
_how = os.environ.get("DLPACKPP_CONFORMANCE_LOAD")
if _how == "crash":
    ctypes.string_at(0)
while _how == "hang":
    print("loading", end="", flush=True)
    time.sleep(0.001)
if _how == "raise":
    raise ValueError("this adapter does not load")
