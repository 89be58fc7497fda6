# SPDX-License-Identifier: Apache-2.0
"""--repro DIR: one standalone script per failed case (filled in below)."""


def write_all(report, folder):
    """Writes a script per failed case of `report` into `folder`; returns their paths."""
    return []
