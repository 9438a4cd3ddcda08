"""Compile every kernel of the test suite's shaders (the metamorphic recipes of tests/shaders:
module, entry point, spec constants, profile, subgroup size, options) in this process, from an
empty kernel cache, at one compile tier; print each kernel's seconds from `Module.kernel()` to a
ready kernel as one JSON line.

    python3 benchmarks/compile_suite.py --tier fast|optimized [--limit N] [--dumped DIR]

--dumped: the pipelines an application created, written by the driver's JITCOOP_ICD_DUMP
(benchmarks/shaders/ggml_mul_mat: ggml's matrix products), instead of the test suite's kernels.

Run by benchmarks/test_bench_compile.py::test_suite_cold with JITCOOP_CACHE_DIR pointing at a
folder holding only the kernel library (so neither tier pays for numba). A kernel that cannot be
compiled on its recipe's profile is left out of both tiers' figures alike (none is, today).
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--tier", required=True, choices=("fast", "optimized"))
    ap.add_argument("--limit", type=int, default=0, help="only the first N kernels (0: all)")
    ap.add_argument("--dumped", type=Path, help="a folder of pipelines written by JITCOOP_ICD_DUMP")
    a = ap.parse_args(argv)
    if a.dumped:
        return _dumped(a)
    sys.path.insert(0, str(ROOT / "tests"))
    import jitcoop
    import jitcoop.signature  # noqa: F401 - imported by Module.kernel(), not compiling
    from metamorphic.recipes import RECIPES
    names = sorted(n for n in RECIPES if n.startswith("tests/shaders/"))
    if a.limit:
        names = names[:a.limit]
    out = {}
    for name in names:
        r = RECIPES[name]
        m = jitcoop.Device(r.profile, subgroup_size=r.sg).load(ROOT / name)
        t0 = time.perf_counter()
        try:
            m.kernel(r.entry, spec=dict(r.spec), **dict(r.options, tier=a.tier))
        except jitcoop.JitcoopError as e:
            out[name] = None
            print(f"{name}: {e}", file=sys.stderr)
            continue
        out[name] = time.perf_counter() - t0
    print(json.dumps({"seconds": out, "peak_mb": _peak_mb()}))


def _dumped(a):
    import jitcoop  # noqa: F401
    from jitcoop.icd import dump
    out = {}
    for f in sorted(a.dumped.glob("*.json"))[:a.limit or None]:
        t0 = time.perf_counter()
        try:
            dump.kernel(f, tier=a.tier)
        except jitcoop.JitcoopError as e:
            out[f.name] = None
            print(f"{f.name}: {e}", file=sys.stderr)
            continue
        out[f.name] = time.perf_counter() - t0
    print(json.dumps({"seconds": out, "peak_mb": _peak_mb()}))


def _peak_mb() -> float:
    """The largest resident set of this process and its compile processes. Those kept for the
    next compile (jitcoop.runtime.compilers) are stopped first: a child counts once reaped."""
    from jitcoop.runtime import compilers
    compilers.stop_all()
    return max(resource.getrusage(w).ru_maxrss for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)) / 1024


if __name__ == "__main__":
    sys.exit(main())
