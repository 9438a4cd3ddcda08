"""From a specialized module to Python source for numba: IR passes, lowering rules, emission."""
