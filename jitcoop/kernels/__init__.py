"""numba building blocks that generated kernels call: memory access, number formats, scalar helpers."""
