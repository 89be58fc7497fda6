# SPDX-License-Identifier: Apache-2.0
"""Builds the README's quick start against the created package through find_package(dlpackpp),
runs it, and checks what it prints."""
import io
import os

from conan import ConanFile
from conan.errors import ConanException
from conan.tools.build import can_run
from conan.tools.cmake import CMake, cmake_layout


class DlpackppTestConan(ConanFile):
    settings = "os", "arch", "compiler", "build_type"
    generators = "CMakeDeps", "CMakeToolchain"
    # The quick start itself is examples/quick_start.cpp beside this folder, so the README's
    # code is what the package is tested with.
    expected = "float32[2, 3] strides [3, 1] cpu"

    def requirements(self):
        self.requires(self.tested_reference_str)

    def layout(self):
        cmake_layout(self)

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def test(self):
        if not can_run(self):
            return
        out = io.StringIO()
        self.run(os.path.join(self.cpp.build.bindir, "quick_start"), stdout=out, env="conanrun")
        if self.expected not in out.getvalue():
            raise ConanException("quick_start printed %r, not %r" % (out.getvalue(), self.expected))
