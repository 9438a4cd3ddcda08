"""Running compiled kernels: device memory, compilation cache, dispatch."""
