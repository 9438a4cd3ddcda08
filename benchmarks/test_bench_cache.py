"""Reading a kernel's disk cache entry: jitcoop's checked entry (header, both SHA-256 hashes,
JSON metadata decoded into KernelMeta) against its peer, the two unchecked files an entry used to
be (the object's bytes and a pickle of the metadata), for kernels of a few sizes.

    python3 -m pytest benchmarks/test_bench_cache.py -q -s
"""
from __future__ import annotations

import pickle
import tempfile
from pathlib import Path

import pytest

import jitcoop
from jitcoop.codegen.meta import KernelMeta
from jitcoop.runtime.cache import read_entry

from conftest import SHADERS, best_of

ROOT = Path(__file__).resolve().parents[1]
CASES = [
    ("saxpy", SHADERS / "saxpy.spv", "generic", {}),
    ("sgemm_tiled", SHADERS / "sgemm_tiled.spv", "generic", {}),
    ("flash_attn", ROOT / "tests" / "shaders" / "coopmat2_apps" / "flash_attn.spv", "nvidia", {}),
]


@pytest.mark.parametrize("name,shader,profile,spec", CASES, ids=[c[0] for c in CASES])
def test_entry_read(benchmark, report, name, shader, profile, spec):
    k = jitcoop.Device(profile).load(shader).kernel(spec=spec)
    from jitcoop.runtime.cache import cache_dir
    path = cache_dir() / f"k_{k._compiled.key}.entry"
    size = path.stat().st_size
    with tempfile.TemporaryDirectory() as d:
        got = read_entry(path, "kernel", k._compiled.key, KernelMeta.from_json)
        assert got is not None
        obj_path, meta_path = Path(d) / "k.o", Path(d) / "k.meta"
        obj_path.write_bytes(got[1])
        meta_path.write_bytes(pickle.dumps(k.meta))

        def old():
            return pickle.loads(meta_path.read_bytes()), obj_path.read_bytes()

        peer = best_of(old, 20)
        benchmark(lambda: read_entry(path, "kernel", k._compiled.key, KernelMeta.from_json))
        ours = benchmark.stats.stats.min
        benchmark.extra_info.update(entry_bytes=size, pickle_bytes=meta_path.stat().st_size + obj_path.stat().st_size,
                                    peer_s=peer, ratio=ours / peer)
        report(f"{name}: checked entry {size} B read in {ours * 1e3:.3f} ms; object + pickle "
               f"{obj_path.stat().st_size + meta_path.stat().st_size} B in {peer * 1e3:.3f} ms ({ours / peer:.2f}x)")
