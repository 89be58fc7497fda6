# SPDX-License-Identifier: Apache-2.0
"""An adapter for the kit's robustness test: the reference framework as a producer only (no
from_dlpack). Its consumer checks skip, and the matrix gets its row but no column of its."""
from _reference import adapter

_names = adapter(None)
NAME, VERSION = "producer-only", "1"
from_numpy, read_only = _names["from_numpy"], _names["read_only"]
