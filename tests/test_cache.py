"""The disk cache: entries checked before use, many processes sharing one folder, a folder that
cannot be written, the size limit, `jitcoop cache`, and kernel metadata through JSON.

The references: numpy's saxpy and subgroup sums (tests/fuzz/cache.py) for every run after a
damaged entry, the entry format's byte layout as runtime/cache_entry.py documents it, and the
folder's files as listed here.
"""
from __future__ import annotations

import ctypes.util
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import jitcoop
from jitcoop.cli import main
from jitcoop.runtime import cache, cache_entry

ROOT = Path(__file__).resolve().parents[1]
SHADERS = ROOT / "tests" / "shaders"


def _env(d, **extra) -> dict:
    env = dict(os.environ, JITCOOP_CACHE_DIR=str(d), PYTHONPATH=str(ROOT))
    env.update(extra)
    return env


def _python(code: str, env, prefix=()) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)


# -- the entry format -------------------------------------------------------------------------------

def test_entry_layout_is_the_documented_one():
    meta = {"a": [1, 2]}
    data = cache_entry.pack("kernel", "abc123", meta, b"\x7fELF-object")
    m = json.dumps(meta, separators=(",", ":")).encode()
    assert data[:8] == b"JITCOOP\x1a"
    assert int.from_bytes(data[8:12], "little") == cache_entry.FORMAT
    assert data[12:28] == jitcoop.__version__.encode().ljust(16, b"\0")
    assert data[28:40] == b"kernel".ljust(12, b"\0")
    assert int.from_bytes(data[40:44], "little") == 6
    assert int.from_bytes(data[44:52], "little") == len(m)
    assert int.from_bytes(data[52:60], "little") == 11
    import hashlib
    assert data[60:92] == hashlib.sha256(m).digest() and data[92:124] == hashlib.sha256(b"\x7fELF-object").digest()
    assert data[128:] == b"abc123" + m + b"\x7fELF-object"
    assert cache_entry.unpack(data, "kernel", "abc123") == (meta, b"\x7fELF-object")


@pytest.mark.parametrize("spoil,why", [
    (lambda d: d[:-1], "truncated"),
    (lambda d: d[:100], "truncated"),
    (lambda d: d + b"x", "wrong size"),
    (lambda d: b"JITCOOQ" + d[7:], "bad magic"),
    (lambda d: d[:8] + (2).to_bytes(4, "little") + d[12:], "format 2"),
    (lambda d: d[:12] + b"9.9.9".ljust(16, b"\0") + d[28:], "jitcoop 9.9.9"),
    (lambda d: d[:18] + b"x" + d[19:], "written by jitcoop"),          # the version's padding
    (lambda d: d[:28] + b"driver".ljust(12, b"\0") + d[40:], "a driver entry"),
    (lambda d: d[:128] + b"abc124" + d[134:], "another key"),
    (lambda d: d[:135] + bytes([d[135] ^ 1]) + d[136:], "damaged metadata"),
    (lambda d: d[:-1] + bytes([d[-1] ^ 0x80]), "damaged object"),
])
def test_each_damage_is_named(spoil, why):
    data = cache_entry.pack("kernel", "abc123", {"a": [1, 2]}, b"\x7fELF-object")
    with pytest.raises(cache_entry.EntryError, match=why):
        cache_entry.unpack(spoil(data), "kernel", "abc123")


# -- kernel metadata through JSON -----------------------------------------------------------------

def _same(a, b, seen) -> bool:
    """Structural equality of two object graphs (attributes, numpy arrays, shared and cyclic objects)."""
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y, seen) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k], seen) for k in a)
    if isinstance(a, (set, frozenset, int, float, str, bytes, bool, type(None))):
        return a == b
    if id(a) in seen:
        return seen[id(a)] is b
    seen[id(a)] = b
    return _same(vars(a), vars(b), seen)


META_CASES = [
    ("jitcoop/examples/saxpy.spv", "generic", {}),
    ("jitcoop/examples/sgemm.spv", "generic", {}),
    ("tests/shaders/linked_list.spv", "generic", {}),             # physical pointers: a type that points to itself
    ("tests/shaders/core/subgroups.spv", "generic", {}),
    ("tests/shaders/cache/pack_unorm.spv", "generic", {}),        # kernel-library variants
    ("tests/shaders/coopmat/muladd_f16_f32.spv", "nvidia", {}, {10: 32}),   # lane layouts: numpy tables
    ("tests/shaders/coopmat2_apps/flash_attn.spv", "nvidia", {}),
    ("tests/shaders/coopmat2/decode_q4.spv", "nvidia", {}),
    ("tests/shaders/coopvec/mm_f16.spv", "nvidia", {}, {0: 16, 1: 16}),
    ("jitcoop/examples/saxpy.spv", "generic", {"profile": True}),  # the profile's counter layout
    ("tests/shaders/coopmat/muladd_f16_f32.spv", "nvidia", {"profile": True}, {10: 32}),
]


@pytest.mark.parametrize("case", META_CASES, ids=[f"{Path(c[0]).stem}-{c[1]}{'-prof' if c[2] else ''}"
                                                 for c in META_CASES])
def test_metadata_round_trips_through_json(case):
    path, profile, options, spec = (*case, {})[:4]
    from jitcoop.codegen.meta import KernelMeta
    from jitcoop.options import KernelOptions
    from jitcoop.runtime.compile import generate_ir
    dev = jitcoop.Device(profile)
    m = dev.load(ROOT / path)
    _, meta = generate_ir(m.spirv, None, spec, dev.profile, dev.subgroup_size, KernelOptions(**options), annotate=False)
    text = json.dumps(meta.to_json(), allow_nan=False)
    back = KernelMeta.from_json(json.loads(text))
    assert _same(meta, back, {})
    assert back.bindings and back.local_size == meta.local_size


@pytest.mark.slow
def test_metadata_of_every_shader_round_trips_through_json():
    """Every entry point of every test, example and benchmark shader on the generic and nvidia
    profiles, at its default specialization (those jitcoop refuses left out)."""
    from jitcoop.codegen.meta import KernelMeta
    from jitcoop.options import KernelOptions
    from jitcoop.runtime.compile import generate_ir
    paths = sorted([*SHADERS.rglob("*.spv"), *(ROOT / "jitcoop" / "examples").glob("*.spv"),
                    *(ROOT / "benchmarks" / "shaders").rglob("*.spv")])
    compared, differ = 0, []
    for path in paths:
        for profile in ("generic", "nvidia"):
            dev = jitcoop.Device(profile)
            try:
                m = dev.load(path)
                for entry in m.entry_points:
                    _, meta = generate_ir(m.spirv, entry, {}, dev.profile, dev.subgroup_size, KernelOptions(),
                                          annotate=False)
                    back = KernelMeta.from_json(json.loads(json.dumps(meta.to_json(), allow_nan=False)))
                    compared += 1
                    if not _same(meta, back, {}):
                        differ.append(f"{path.relative_to(ROOT)} {entry} {profile}")
            except jitcoop.JitcoopError:
                continue
    assert not differ, differ
    assert compared >= 300
    print(f"\n{compared} kernels' metadata round-tripped through JSON")


def test_metadata_refuses_what_it_does_not_write():
    from jitcoop.codegen.meta import KernelMeta
    from jitcoop.codegen.meta_json import MetaFormatError
    for bad in ({"$": "obj", "c": "Popen", "id": 0, "f": {}}, {"$": "obj", "c": "KernelMeta", "id": 0, "f": {}},
                [1, 2], {"$": "ref", "id": 4}, {"$": "array", "dtype": "|O", "shape": [1], "v": ""},
                {"$": "obj", "c": "Scalar", "id": 0, "f": {"kind": "int", "width": 32, "signed": 1, "encoding": ""}}):
        with pytest.raises(MetaFormatError):
            KernelMeta.from_json(bad)


# -- damaged entries: a fresh process runs after each -----------------------------------------------

@pytest.fixture(scope="module")
def damage_outcomes(tmp_path_factory):
    """tests.fuzz cache's outcomes: every entry (kernel, driver, library variant, the kernel that
    calls it) with every damage, then random cases; {(entry, damage): Counter(outcome)}."""
    p = subprocess.run([sys.executable, "-m", "tests.fuzz", "cache", "--count", "200", "--seed", "3", "--json"],
                       cwd=ROOT, env=_env(tmp_path_factory.mktemp("unused")), capture_output=True, text=True,
                       timeout=900)                                  # (the campaign makes its own folder)
    assert p.returncode == 0, p.stderr[-3000:]
    out = {}
    for t, d, o, n in json.loads(p.stdout.strip().splitlines()[-1]):
        out.setdefault((t, d), Counter())[o] += n
    return out


def _all_right(outcomes, pairs):
    bad = {k: dict(v) for k, v in outcomes.items() if k in pairs and set(v) != {"right"}}
    assert not bad, bad
    return sum(sum(outcomes[k].values()) for k in pairs)


@pytest.mark.parametrize("damage", ["truncate", "bitflip", "overwrite", "empty", "garbage_meta",
                                    "garbage_meta_unhashed"])
def test_damaged_entries_are_compiled_again(damage_outcomes, damage):
    pairs = [k for k in damage_outcomes if k[1] == damage]
    assert {t for t, _ in pairs} == {"kernel", "driver", "library", "kernel_lib"}
    assert _all_right(damage_outcomes, pairs) >= 4


def test_entries_of_another_version_are_compiled_again(damage_outcomes):
    assert _all_right(damage_outcomes, [k for k in damage_outcomes if k[1] == "wrong_version"]) >= 4


def test_another_keys_entry_in_place_is_compiled_again(damage_outcomes):
    assert _all_right(damage_outcomes, [k for k in damage_outcomes if k[1] == "other_entry"]) >= 4


def test_damaged_library_entries_are_compiled_again(damage_outcomes):
    assert _all_right(damage_outcomes, [k for k in damage_outcomes if k[0] == "library"]) >= len(
        {d for _, d in damage_outcomes})


def test_every_damaged_entry_gave_the_right_bytes(damage_outcomes):
    total = Counter()
    for v in damage_outcomes.values():
        total.update(v)
    assert set(total) == {"right"} and total["right"] == 200


@pytest.mark.slow
def test_thousand_damaged_entries(tmp_path):
    p = subprocess.run([sys.executable, "-m", "tests.fuzz", "cache", "--count", "1200", "--seed", "11", "--json"],
                       cwd=ROOT, env=_env(tmp_path), capture_output=True, text=True, timeout=3600)
    assert p.returncode == 0, p.stderr[-3000:]
    total = Counter()
    for _, _, o, n in json.loads(p.stdout.strip().splitlines()[-1]):
        total[o] += n
    assert total == {"right": 1200}


# -- many processes, one folder ----------------------------------------------------------------------

def _processes(d, n: int, sizes, **env):
    code = f"from tests.fuzz.cache import worker; import sys; worker({list(sizes)!r}, int(sys.argv[1]))"
    procs = [subprocess.Popen([sys.executable, "-c", code, str(i)], cwd=ROOT, env=_env(d, **env),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(n)]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=900)
        assert p.returncode == 0, err[-3000:]
        outs.append(json.loads(out.strip().splitlines()[-1]))
    return outs


def _many_writers(tmp_path, n, sizes):
    d = tmp_path / "cache"
    t0 = time.perf_counter()
    first = _processes(d, n, sizes)
    t1 = time.perf_counter()
    assert all(o["right"] == len(sizes) and o["wrong"] == 0 and not o["warnings"] for o in first), first
    names = sorted(p.name for p in d.iterdir())
    kernels = [x for x in names if x.startswith("k_")]
    assert len(kernels) == len(sizes) and all(x.endswith(".entry") for x in kernels)
    assert [x for x in names if x not in kernels] == [next(x for x in names if x.startswith("drive_")), "stats"], names
    for x in kernels:
        data = (d / x).read_bytes()
        cache_entry.unpack(data, "kernel", x[2:-6])                     # whole, and for its own key
    t2 = time.perf_counter()
    # each kernel compiled once: the others waited for its lock (cache.compiling) and read its entry
    assert sum(o["hits"] for o in first) == (n - 1) * len(sizes), first
    then = _processes(d, n, sizes)
    assert all(o["right"] == o["hits"] == len(sizes) and not o["warnings"] for o in then), then
    assert sorted(p.name for p in d.iterdir()) == names
    return dict(compile_s=t1 - t0, load_s=time.perf_counter() - t2, first_hits=sum(o["hits"] for o in first),
                results=sum(o["right"] for o in first + then))


def test_processes_compile_into_one_folder_at_once(tmp_path):
    _many_writers(tmp_path, 4, [1, 8, 33, 64, 100])


@pytest.mark.slow
def test_sixteen_processes_compile_twenty_kernels_into_one_folder(tmp_path):
    r = _many_writers(tmp_path, 16, [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 40, 48, 64, 96, 100, 128, 256])
    print(f"\n16 processes compiling 20 kernels into one folder: {r['compile_s']:.1f} s, {r['first_hits']} of "
          f"their 320 kernels found already written by another; 16 more loading them: {r['load_s']:.1f} s; "
          f"{r['results']} results right")


# -- a folder that cannot be written ---------------------------------------------------------------

def _worker_code(sizes):
    return f"from tests.fuzz.cache import worker; worker({list(sizes)!r})"


def test_folder_that_cannot_be_made(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    p = _python(_worker_code([64, 32, 16]), _env(tmp_path / "file" / "cache"))
    assert p.returncode == 0, p.stderr[-3000:]
    o = json.loads(p.stdout.strip().splitlines()[-1])
    assert o["right"] == 3 and o["hits"] == 0
    assert len(o["warnings"]) == 1 and "cannot be written" in o["warnings"][0] and "memory" in o["warnings"][0]


def test_read_only_folder(tmp_path):
    d = tmp_path / "cache"
    for sizes in ([64], [32]):
        before = set(d.glob("k_*.entry"))
        p = _python(_worker_code(sizes), _env(d))
        assert p.returncode == 0, p.stderr[-3000:]
    damaged = (set(d.glob("k_*.entry")) - before).pop()           # the kernel at workgroup size 32, cut short
    damaged.write_bytes(damaged.read_bytes()[:-10])
    before = {x.name: x.read_bytes() for x in d.iterdir()}
    d.chmod(0o555)
    try:
        # root writes anywhere: without its capabilities it does not (setpriv drops them)
        prefix = ("setpriv", "--bounding-set=-all", "--inh-caps=-all") if os.geteuid() == 0 else ()
        if prefix and not shutil.which("setpriv"):
            pytest.skip("running as root without setpriv: the folder cannot be made read-only")
        p = _python(_worker_code([64, 32, 16]), _env(d), prefix)
    finally:
        d.chmod(0o755)
    assert p.returncode == 0, p.stderr[-3000:]
    o = json.loads(p.stdout.strip().splitlines()[-1])
    assert o["right"] == 3 and o["hits"] == 1                     # the entry that was whole
    unwritable, unusable = sorted(o["warnings"], key=lambda w: "unusable" in w)   # one each, though two
                                                                                   # kernels were compiled
    assert str(damaged) in unusable and "truncated" in unusable
    assert "cannot be written" in unwritable and "memory" in unwritable
    after = {x.name: x.read_bytes() for x in d.iterdir()}
    assert after.pop("stats").endswith(b"\n2 2 1 0\n")             # its own file stays writable: hits, misses,
    before.pop("stats")                                           # unusable, written
    assert after == before


# -- the size limit, and `jitcoop cache` -------------------------------------------------------------

def _fill(d: Path, n: int, size: int, start: float) -> list:
    """n kernel entries of `size` object bytes, last used a second apart from `start` on."""
    paths = []
    for i in range(n):
        key = f"{i:024x}"
        p = d / f"k_{key}.entry"
        p.write_bytes(cache_entry.pack("kernel", key, {}, bytes(size)))
        os.utime(p, (start + i, start + i))
        paths.append(p)
    return paths


def test_prune_removes_least_recently_used_first(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("JITCOOP_CACHE_DIR", str(tmp_path))
    paths = _fill(tmp_path, 10, 1000, time.time() - 100)
    os.utime(paths[2])                                           # used now: kept
    one = paths[0].stat().st_size
    assert main(["cache", "prune", "--size", str(4 * one)]) == 0
    assert "removed 6 files" in capsys.readouterr().out
    assert sorted(p for p in tmp_path.iterdir()) == sorted([paths[2], *paths[7:]])


def test_a_hit_marks_the_entry_used(tmp_path):
    paths = _fill(tmp_path, 3, 100, time.time() - 100)
    assert cache.read_entry(paths[0], "kernel", f"{0:024x}") is not None
    cache.prune(tmp_path, 2 * paths[0].stat().st_size)
    assert sorted(tmp_path.iterdir()) == [paths[0], paths[2]]


def test_size_limit_applies_after_writes(tmp_path, monkeypatch):
    monkeypatch.setenv("JITCOOP_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("JITCOOP_CACHE_MAX", "20K")
    monkeypatch.setattr(cache, "PRUNE_EVERY", 5)
    monkeypatch.setattr(cache, "counters", cache.Counters())
    for i in range(40):
        cache.write_entry(tmp_path / f"k_{i:024x}.entry", "kernel", f"{i:024x}", {}, bytes(1000))
    total = sum(p.stat().st_size for p in tmp_path.iterdir())
    entry = (tmp_path / f"k_{39:024x}.entry").stat().st_size
    assert total <= 20 * 1024 + 5 * entry                          # pruned at most PRUNE_EVERY writes ago
    assert (tmp_path / f"k_{39:024x}.entry").exists() and not (tmp_path / f"k_{0:024x}.entry").exists()


def test_size_parsing():
    assert cache.parse_size("500M") == 500 << 20 and cache.parse_size("2G") == 2 << 30
    assert cache.parse_size("1.5K") == 1536 and cache.parse_size("0") == 0 and cache.parse_size("2GiB") == 2 << 30
    with pytest.raises(ValueError):
        cache.parse_size("lots")


def test_cache_info_and_clear(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("JITCOOP_CACHE_DIR", str(tmp_path))
    _fill(tmp_path, 3, 1000, time.time())
    lib = tmp_path / "lib-0123456789abcdef"
    lib.mkdir()
    (lib / "jcl.x.y.i64.entry").write_bytes(cache_entry.pack("library", "x", {}, bytes(10)))
    (tmp_path / "k_0123.o").write_bytes(b"old")                     # an earlier format's files
    (tmp_path / "k_0123.meta").write_bytes(b"old")
    stale = tmp_path / ".tmp-k_1.entry-1-abcd"
    stale.write_bytes(b"half")
    os.utime(stale, (time.time() - 3600,) * 2)
    (tmp_path / "stats").write_text("3 1 1 1\n1 3 0 3\ngarbled\n")
    (tmp_path / "notes.txt").write_text("the user's")
    assert main(["cache"]) == 0
    out = capsys.readouterr().out
    assert "     3     3.4 KiB  kernels" in out                     # 3 x (128 + 24 + 2 + 1000) bytes
    assert "     1       141 B  library variants" in out
    assert "     2         6 B  files of an earlier format" in out and "     1         4 B  temporary files" in out
    assert "50.0% (4 hits, 4 misses, 1 unusable entries compiled again; 2 processes" in out
    assert main(["cache", "clear"]) == 0
    assert "removed 7 files" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    assert main(["cache", "info"]) == 0
    assert "no lookups recorded" in capsys.readouterr().out


def test_hit_rate_counts_processes(tmp_path, capsys, monkeypatch):
    for _ in range(2):
        p = _python(_worker_code([64]), _env(tmp_path))
        assert p.returncode == 0, p.stderr[-3000:]
    monkeypatch.setenv("JITCOOP_CACHE_DIR", str(tmp_path))
    assert main(["cache"]) == 0
    # the first process missed the kernel and the driver, the second found both
    assert "50.0% (2 hits, 2 misses, 0 unusable entries compiled again; 2 processes" in capsys.readouterr().out


def test_prune_size_must_be_a_size(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("JITCOOP_CACHE_DIR", str(tmp_path))
    assert main(["cache", "prune", "--size", "big"]) == 2
    assert "--size" in capsys.readouterr().err


# -- through the Vulkan driver ------------------------------------------------------------------------

@pytest.mark.skipif(ctypes.util.find_library("vulkan") is None or shutil.which("cc") is None,
                    reason="needs the Vulkan loader (libvulkan1) and a C compiler")
def test_driver_reports_a_damaged_entry_and_runs(tmp_path):
    """The Vulkan driver (tools/vkrun running the saxpy example): a truncated kernel entry is a
    debug-utils warning (stderr: vkrun has no messenger) and the dispatch gives numpy's bytes."""
    from jitcoop import icd
    from tests.fuzz.cache import N, saxpy_inputs, saxpy_reference
    inc = ROOT / "jitcoop" / "icd" / "include"
    subprocess.run(["sh", str(ROOT / "tools" / "vkrun" / "build.sh"), str(tmp_path)], check=True, capture_output=True,
                   env={**os.environ, "VULKAN_INCLUDE": str(inc)})
    x, y = saxpy_inputs()
    (tmp_path / "x").write_bytes(x.tobytes())
    (tmp_path / "y").write_bytes(y.tobytes())
    (tmp_path / "push").write_bytes(struct.pack("<fI", 2.0, N))
    (tmp_path / "cases.txt").write_text(f"case saxpy\nspv {ROOT / 'jitcoop' / 'examples' / 'saxpy.spv'}\n"
                                        f"groups {-(-N // 64)}\npush push\nbind 0 0 x -\nbind 1 0 y out\n")
    env = {k: v for k, v in _env(tmp_path / "cache").items()
           if k not in ("VK_ICD_FILENAMES", "VK_ADD_DRIVER_FILES", "VK_INSTANCE_LAYERS")}
    env.update(VK_DRIVER_FILES=str(icd.manifest_path()), NODEVICE_SELECT="1", JITCOOP_ICD_PROFILES="generic")
    for damaged in (False, True):
        if damaged:
            entry = next((tmp_path / "cache").glob("k_*.entry"))
            entry.write_bytes(entry.read_bytes()[:1000])
        p = subprocess.run([str(tmp_path / "vkrun"), str(tmp_path / "cases.txt")], env=env, capture_output=True,
                           text=True, timeout=600)
        assert p.returncode == 0 and "case saxpy: ok" in p.stdout, p.stdout[-3000:] + p.stderr[-3000:]
        assert (tmp_path / "out").read_bytes() == saxpy_reference()
        warned = re.findall(r"jitcoop Vulkan driver: warning: jitcoop cache entry (\S+) is unusable \(truncated",
                            p.stderr)
        assert warned == ([str(entry)] if damaged else []), p.stderr


def test_prune_sums_a_long_stats_file(tmp_path):
    (tmp_path / "stats").write_text("2 1 0 1\n" * 10000 + "junk\n")
    cache.prune(tmp_path, 1 << 30)
    assert (tmp_path / "stats").read_text() == "20000 10000 0 10000 10000\n"
    (tmp_path / "stats").write_text("20000 10000 0 10000 10000\n1 0 0 0\n")
    assert cache.read_stats(tmp_path) == dict(hits=20001, misses=10000, damaged=0, written=10000, processes=10001)


def test_warning_points_at_the_callers_line(tmp_path, monkeypatch):
    """A damaged entry's CacheWarning names the line that called jitcoop, not jitcoop's own."""
    p = _python(_worker_code([77]), _env(tmp_path))
    assert p.returncode == 0, p.stderr[-3000:]
    entry = next(tmp_path.glob("k_*.entry"))
    entry.write_bytes(entry.read_bytes()[:500])
    monkeypatch.setenv("JITCOOP_CACHE_DIR", str(tmp_path))
    m = jitcoop.Device().load(ROOT / "jitcoop" / "examples" / "saxpy.spv")
    with pytest.warns(jitcoop.CacheWarning, match=r"is unusable \(truncated: 500 bytes") as w:
        m.kernel(spec={0: 77})
    assert [x.filename for x in w] == [__file__]


def test_prune_removes_what_dead_processes_left(tmp_path):
    """Temporary entries and compile locks older than STALE_TMP_S are a dead process's; younger
    ones are being written, and stay."""
    old = [tmp_path / ".tmp-k_1.entry-77-abcd", tmp_path / ".tmp-k_2.entry.lock"]
    young = [tmp_path / ".tmp-k_3.entry-78-abcd", tmp_path / ".tmp-k_4.entry.lock"]
    for p in old + young:
        p.write_bytes(b"x")
    for p in old:
        os.utime(p, (time.time() - cache.STALE_TMP_S - 5,) * 2)
    assert cache.prune(tmp_path, 1 << 30) == (2, 2)
    assert sorted(tmp_path.iterdir()) == sorted(young)


_PACKED = """
import json, warnings, jitcoop
from tests.fuzz.cache import run_packed, packed_reference
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    right = run_packed() == packed_reference()
cache = [str(x.message) for x in w if issubclass(x.category, jitcoop.CacheWarning)]
print(json.dumps(dict(right=right, warnings=cache)))
"""


def test_library_warnings_from_the_compile_process_reach_the_caller(tmp_path):
    """A kernel-library variant is looked up while the kernel's code is generated, in the compile's
    child process: its warning is issued again in the caller's process, where catch_warnings sees it."""
    p = _python(_PACKED, _env(tmp_path))
    assert p.returncode == 0 and json.loads(p.stdout.splitlines()[-1]) == dict(right=True, warnings=[]), p.stderr
    for k in tmp_path.glob("k_*.entry"):
        k.unlink()
    lib = next(tmp_path.glob("lib-*/*.entry"))
    lib.write_bytes(lib.read_bytes()[:300])
    p = _python(_PACKED, _env(tmp_path))
    assert p.returncode == 0, p.stderr[-3000:]
    o = json.loads(p.stdout.splitlines()[-1])
    assert o["right"] and len(o["warnings"]) == 1 and f"{lib} is unusable (truncated" in o["warnings"][0], o


def test_read_only_folder_with_library_kernels_warns_once(tmp_path):
    d = tmp_path / "cache"
    d.mkdir()
    d.chmod(0o555)
    try:
        prefix = ("setpriv", "--bounding-set=-all", "--inh-caps=-all") if os.geteuid() == 0 else ()
        if prefix and not shutil.which("setpriv"):
            pytest.skip("running as root without setpriv: the folder cannot be made read-only")
        p = _python(_PACKED, _env(d), prefix)
    finally:
        d.chmod(0o755)
    assert p.returncode == 0, p.stderr[-3000:]
    o = json.loads(p.stdout.splitlines()[-1])
    assert o["right"] and len(o["warnings"]) == 1 and "cannot be written" in o["warnings"][0], o
    assert list(d.iterdir()) == []
