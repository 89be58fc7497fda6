# SPDX-License-Identifier: Apache-2.0
"""python -m dlpackpp.conformance: see docs/conformance.md."""

import sys

from . import main

sys.exit(main())
