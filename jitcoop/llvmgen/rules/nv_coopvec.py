"""(being ported to the LLVM generator)"""
