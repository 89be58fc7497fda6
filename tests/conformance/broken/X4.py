# SPDX-License-Identifier: Apache-2.0
"""A broken adapter for the kit's self-proof: the exchange table's current_work_stream fails for CPU (check X4 must fail)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _reference import adapter  # noqa: E402

globals().update(adapter("X4"))
