"""Benchmarks: run with `python -m pytest benchmarks -q` (pytest-benchmark).

Each benchmark times jitcoop and a peer (numpy) in the same run and records the ratio in
`extra_info`; the figures quoted in notes come from these ratios, never from wall-clock asserts.
"""
import os
import time
from pathlib import Path

import pytest

os.environ.setdefault("JITCOOP_CACHE_DIR", str(Path(__file__).resolve().parents[1] / ".pytest_cache" / "jitcoop"))
# Run times are the optimized tier's (the code a kernel dispatched more than once ends up
# running); test_bench_compile.py names the tier of each compile it times.
os.environ.setdefault("JITCOOP_TIER", "optimized")

SHADERS = Path(__file__).parent / "shaders"


def best_of(fn, repeat=5):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


@pytest.fixture
def report(request):
    lines = []
    yield lines.append
    if lines:
        print("\n" + "\n".join(lines))
