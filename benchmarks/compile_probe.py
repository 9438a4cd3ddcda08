"""Compile one shader in this fresh process and print what it cost, as one JSON line.

    python3 benchmarks/compile_probe.py SHADER.spv [--profile P] [--spec '{"0": 64}'] [--entry E]
        [--options '{"numerics": "float32"}'] [--import-only]

Run by benchmarks/test_bench_compile.py in a subprocess, with JITCOOP_CACHE_DIR (and, for a run with
nothing cached at all, NUMBA_CACHE_DIR) pointing at empty or warm folders. Reports the seconds from
`Module.kernel()` to a ready kernel (at the tier the options name: tier="fast" is what a first
dispatch waits for under the default policy), the seconds to import jitcoop, whether the disk
cache served the kernel, the tier of the code it got, and the peak resident memory: of this process, or of the compile's child process
where that was larger (a compile with a time limit runs in a forked child: runtime/limit.py).
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import time


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("shader")
    ap.add_argument("--profile", default="generic")
    ap.add_argument("--spec", default="{}")
    ap.add_argument("--entry", default=None)
    ap.add_argument("--options", default="{}")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    import jitcoop
    import jitcoop.signature  # noqa: F401 - imported by Module.kernel() (ml_dtypes: 0.05-1.3 s), not compiling
    t1 = time.perf_counter()
    mod = jitcoop.Device(a.profile).load(a.shader)
    spec = {int(k) if k.isdigit() else k: v for k, v in json.loads(a.spec).items()}
    t2 = time.perf_counter()
    k = mod.kernel(a.entry, spec=spec, **json.loads(a.options))
    t3 = time.perf_counter()
    rss = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)) / 1024
    print(json.dumps(dict(import_s=t1 - t0, load_s=t2 - t1, kernel_s=t3 - t2, cache_hit=bool(k.cache_hit),
                          peak_mb=rss, tier=k.tier)))


if __name__ == "__main__":
    sys.exit(main())
