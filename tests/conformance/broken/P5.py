# SPDX-License-Identifier: Apache-2.0
"""A broken adapter for the kit's self-proof: exports bool as uint8 (kDLUInt) (check P5 must fail)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _reference import adapter  # noqa: E402

globals().update(adapter("P5"))
