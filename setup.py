"""Builds jitcoop's Vulkan driver library; everything else about the package is in pyproject.toml.

The library is a cffi embedding-mode module (jitcoop/icd/_build.py) written to
jitcoop/icd/libjitcoop_vulkan.so, the name the driver's manifest gives the Vulkan loader. It
needs a C compiler and Python's shared library; where either is missing jitcoop still
installs, without the driver (`jitcoop icd` then says so).
"""
import os

from setuptools import setup
from setuptools.command.build_ext import build_ext

PACKAGE, MODULE = "jitcoop.icd", "_vulkan"       # the module name _build.py gives cffi
LIBRARY = "libjitcoop_vulkan.so"


class BuildDriver(build_ext):
    def get_ext_filename(self, fullname):
        # distutils asks with the module's last name, setuptools with the full one
        if fullname == MODULE:
            return LIBRARY
        if fullname == f"{PACKAGE}.{MODULE}":
            return os.path.join(*PACKAGE.split("."), LIBRARY)
        return super().get_ext_filename(fullname)


setup(cffi_modules=["jitcoop/icd/_build.py:ffibuilder"], cmdclass={"build_ext": BuildDriver})
