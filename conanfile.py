# SPDX-License-Identifier: Apache-2.0
"""Conan 2 recipe: dlpackpp as a header-only package (`conan create .` builds test_package).

Consumers get the CMake package `dlpackpp` with the target `dlpackpp::dlpackpp` (CMakeDeps) and
the pkg-config module `dlpackpp` (PkgConfigDeps), as from `cmake --install`. Nothing comes from a
remote: the recipe has no requirements, so it also works offline.
"""
import os
import re

from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.files import copy, load
from conan.tools.layout import basic_layout

required_conan_version = ">=2.0"


class DlpackppConan(ConanFile):
    name = "dlpackpp"
    package_type = "header-library"
    description = "Header-only C++17 RAII handles over DLPack"
    license = "Apache-2.0"
    topics = ("dlpack", "tensor", "header-only")
    # Settings only to check the C++ standard; package_id() drops them, one package fits all.
    settings = "os", "arch", "compiler", "build_type"
    # All of include/: the bundled dlpack.h (include/dlpackpp/bundled) is the default DLPack header.
    exports_sources = "include/*", "LICENSE"
    no_copy_source = True

    def set_version(self):
        # include/dlpackpp/version.hpp is the version's one home.
        text = load(self, os.path.join(self.recipe_folder, "include", "dlpackpp", "version.hpp"))
        parts = []
        for part in ("MAJOR", "MINOR", "PATCH"):
            found = re.search(r"^#define DLPACKPP_VERSION_%s (\d+)$" % part, text, re.MULTILINE)
            if found is None:
                raise ValueError("include/dlpackpp/version.hpp does not define DLPACKPP_VERSION_" + part)
            parts.append(found.group(1))
        self.version = ".".join(parts)

    def layout(self):
        basic_layout(self, src_folder=".")

    def package_id(self):
        self.info.clear()

    def validate(self):
        if self.settings.get_safe("compiler.cppstd"):
            check_min_cppstd(self, 17)

    def package(self):
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))
        copy(self, "*", os.path.join(self.source_folder, "include"),
             os.path.join(self.package_folder, "include"))

    def package_info(self):
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
        self.cpp_info.set_property("cmake_file_name", "dlpackpp")
        self.cpp_info.set_property("cmake_target_name", "dlpackpp::dlpackpp")
        self.cpp_info.set_property("pkg_config_name", "dlpackpp")
