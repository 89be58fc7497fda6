# SPDX-License-Identifier: Apache-2.0
"""The adapter of the kit's self-proof: the reference framework (_reference.py) with the one
fault, or the one conforming variant, that $DLPACKPP_CONFORMANCE_FAULT names (a check ID of
_reference.FAULTS, or a name of _reference.VARIANTS). It imports its neighbour as any
adapter may: the kit puts an adapter's folder on sys.path."""
import os

from _reference import adapter

globals().update(adapter(os.environ["DLPACKPP_CONFORMANCE_FAULT"]))
