"""Damaged disk cache entries: each case spoils one entry of a cache folder, then a fresh process
(a fork of this one, which never loaded the kernels) compiles and dispatches the kernel that
needs it and must give numpy's bytes, with a CacheWarning naming the entry, and leave a good
entry in its place.

    python3 -m tests.fuzz cache --count 1000 --seed 1 [--json]

The entries: a kernel (the saxpy example), the dispatch driver (every dispatch needs it), and
a kernel-library variant with the kernel that calls it (tests/shaders/cache/pack_unorm: GLSL's
packUnorm4x8 in divergent code). The damage (DAMAGE): truncated at a random length, bits
flipped, a span overwritten with random bytes, another entry's bytes (another key, another
kind), metadata replaced by garbage or by JSON of the wrong form under correct hashes, another
format or jitcoop version in the header, an empty file. The first cases take each entry with each
damage once; the rest are drawn at random.
"""
from __future__ import annotations

import json
import os
import struct
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
PACKED = ROOT / "tests" / "shaders" / "cache" / "pack_unorm.spv"
N = 200                      # saxpy's elements


# -- the kernels, and numpy's answers ----------------------------------------------------------------

def saxpy_inputs():
    x = np.arange(N, dtype=np.float32) - 50
    y = (np.arange(N, dtype=np.float32) % 7) * 3
    return x, y


def saxpy_reference() -> bytes:
    x, y = saxpy_inputs()
    return (np.float32(2.0) * x + y).astype(np.float32).tobytes()     # small integers: exact either way


def run_saxpy(spec=None) -> bytes:
    import jitcoop
    from jitcoop import examples
    k = jitcoop.Device().load(examples.path("saxpy")).kernel(spec=spec or {})
    x, y = saxpy_inputs()
    wg = (spec or {}).get(0, 64)
    k.dispatch((-(-N // wg), 1, 1), {0: x, 1: y}, push=struct.pack("<fI", 2.0, N))
    return y.tobytes()


def packed_inputs():
    u = (np.arange(128, dtype=np.uint32) * 0x9E3779B1 + 3) ^ (np.arange(128, dtype=np.uint32) >> 2)
    return u, np.full(128, 5, np.uint32)


def packed_reference() -> bytes:
    """o[g] = u[g] for an odd u[g]: packUnorm4x8 gives back the bytes that unpackUnorm4x8 made
    unorm values (b / 255 scaled by 255 rounds to b)."""
    u, o = packed_inputs()
    odd = (u & 1) == 1
    o[odd] = u[odd]
    return o.tobytes()


def run_packed() -> bytes:
    import jitcoop
    k = jitcoop.Device().load(PACKED).kernel()
    u, o = packed_inputs()
    k.dispatch((2, 1, 1), {0: u, 1: o})
    return o.tobytes()


RUNS = {"saxpy": (run_saxpy, saxpy_reference), "packed": (run_packed, packed_reference)}


# -- the damage -----------------------------------------------------------------------------------

def _header(data: bytes):
    from jitcoop.runtime.cache_entry import _HEADER, HEADER_SIZE
    f = list(_HEADER.unpack_from(data))
    klen, mlen = f[4], f[5]
    key = data[HEADER_SIZE:HEADER_SIZE + klen]
    meta = data[HEADER_SIZE + klen:HEADER_SIZE + klen + mlen]
    obj = data[HEADER_SIZE + klen + mlen:]
    return f, key, meta, obj


def repack(data: bytes, meta: bytes | None = None, version: bytes | None = None, fmt: int | None = None,
           kind: bytes | None = None) -> bytes:
    """An entry with parts replaced and its sizes and hashes made to match (a well-formed entry)."""
    import hashlib
    from jitcoop.runtime.cache_entry import _HEADER
    f, key, m, obj = _header(data)
    m = m if meta is None else meta
    f[1] = f[1] if fmt is None else fmt
    f[2] = f[2] if version is None else version.ljust(16, b"\0")
    f[3] = f[3] if kind is None else kind.ljust(12, b"\0")
    f[5], f[7] = len(m), hashlib.sha256(m).digest()
    return _HEADER.pack(*f) + key + m + obj


def _garbage_meta(rng, meta: bytes) -> bytes:
    j = json.loads(meta)
    text = json.dumps(j)
    choices = [
        lambda: rng.bytes(int(rng.integers(0, 300))),
        lambda: b"{}", lambda: b"[]", lambda: b"null", lambda: b"12", lambda: b'"x"',
        lambda: meta[:int(rng.integers(0, len(meta)))],                   # cut short
        lambda: text.replace('"c": "', '"c": "Popen', 1).encode(),        # a class that is not allowed
        lambda: text.replace('"$": "', '"$": "x', 1).encode(),            # an unknown tag
        lambda: text.replace('"f": {', '"f": {"1 bad": 0, ', 1).encode(),  # an attribute name that is not one
        lambda: text.replace('"id": 0', '"id": "0"', 1).encode(),
        lambda: b"[" * 5000 + b"]" * 5000,                              # nested past any limit
        lambda: json.dumps({"$": "ref", "id": 99}).encode(),
        lambda: json.dumps({"$": "array", "dtype": "|O", "shape": [1], "v": ""}).encode(),
        lambda: json.dumps({"$": "array", "dtype": "<i4", "shape": [3], "v": "AAAA"}).encode(),
        lambda: json.dumps({"$": "bytes", "v": "***"}).encode(),
        lambda: json.dumps(_drop_field(j, rng)).encode(),                # an object without a field
        lambda: json.dumps({"func": 1}).encode(),
    ]
    out = choices[int(rng.integers(len(choices)))]()
    try:
        same = json.loads(out) == j                       # a replacement that found nothing to replace
    except (ValueError, RecursionError):
        same = False
    return rng.bytes(len(meta)) if same else out


def _drop_field(j, rng):
    objs = []

    def walk(v):
        if isinstance(v, dict):
            if v.get("$") == "obj" and v.get("f"):
                objs.append(v)
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
    walk(j)
    if objs:
        o = objs[int(rng.integers(len(objs)))]
        o["f"].pop(sorted(o["f"])[int(rng.integers(len(o["f"])))])
    return j


def damage(kind: str, rng, data: bytes, others: list) -> bytes:
    n = len(data)
    if kind == "truncate":
        return data[:int(rng.integers(0, n))]
    if kind == "bitflip":
        b = bytearray(data)
        for _ in range(int(rng.integers(1, 5))):
            i = int(rng.integers(0, n))
            b[i] ^= 1 << int(rng.integers(0, 8))
        return bytes(b)
    if kind == "overwrite":
        b = bytearray(data)
        i = int(rng.integers(0, n))
        span = rng.bytes(int(rng.integers(1, 64)))
        b[i:i + len(span)] = span
        return bytes(b[:n])
    if kind == "other_entry":
        return others[int(rng.integers(len(others)))]
    if kind == "garbage_meta":
        f, key, meta, obj = _header(data)
        return repack(data, meta=_garbage_meta(rng, meta))
    if kind == "garbage_meta_unhashed":                  # the header's hash left as it was
        f, key, meta, obj = _header(data)
        g = rng.bytes(len(meta))
        return data[:len(data) - len(obj) - len(meta)] + g + obj
    if kind == "wrong_version":
        how = int(rng.integers(3))
        return (repack(data, version=b"0.0.9") if how == 0 else repack(data, fmt=2 + int(rng.integers(100)))
                if how == 1 else repack(data, kind=[b"kernel", b"library", b"driver", b"zz"][int(rng.integers(4))]))
    if kind == "empty":
        return b""
    raise ValueError(kind)


DAMAGE = ("truncate", "bitflip", "overwrite", "other_entry", "garbage_meta", "garbage_meta_unhashed",
          "wrong_version", "empty")
# (entry, the run that needs it, share of the cases): library cases recompile a numba function
TARGETS = (("kernel", "saxpy", 0.55), ("driver", "saxpy", 0.25), ("kernel_lib", "packed", 0.12),
           ("library", "packed", 0.08))


# -- the campaign ---------------------------------------------------------------------------------

@dataclass
class Result:
    cases: int = 0
    outcomes: Counter = field(default_factory=Counter)       # (target, damage, outcome) -> count
    failures: list = field(default_factory=list)
    seconds: float = 0.0

    def count(self, outcome: str) -> int:
        return sum(n for (_, _, o), n in self.outcomes.items() if o == outcome)

    def table(self) -> str:
        rows = Counter()
        for (t, d, o), n in self.outcomes.items():
            rows[(t, d, o)] += n
        lines = [f"{'entry':<11} {'damage':<22} outcome: cases"]
        for (t, d, o), n in sorted(rows.items()):
            lines.append(f"{t:<11} {d:<22} {o}: {n}")
        return "\n".join(lines)


def _child(run: str, path: Path, damaged: bool):
    """In the forked process: run, compare, and exit 0 (right bytes, and one CacheWarning naming the
    entry when it was damaged), 1 (wrong bytes), 2 (not one warning), 3 (an exception)."""
    code = 3
    try:
        import jitcoop
        fn, ref = RUNS[run]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            got = fn()
        warned = sum(issubclass(x.category, jitcoop.CacheWarning) and str(path) in str(x.message) for x in w)
        code = 1 if got != ref() else 2 if warned != (1 if damaged else 0) else 0
    except BaseException:                              # noqa: BLE001
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _in_child(fn, *args) -> int:
    """fn(*args) in a forked process; its exit status, or -signal for a crash."""
    pid = os.fork()
    if pid == 0:
        fn(*args)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _prepare(d: Path) -> dict:
    """Fill the cache folder, each kernel in a child (this process loads none), and name its entries."""
    def fill(fn):
        try:
            fn()
        finally:
            os._exit(0)
    made = {}
    for name, fn in (("kernel", run_saxpy), ("other", lambda: run_saxpy({0: 32})), ("kernel_lib", run_packed)):
        before = set(d.rglob("*.entry"))
        if _in_child(fill, fn) != 0:
            raise RuntimeError("preparing the cache failed")
        for p in set(d.rglob("*.entry")) - before:
            made[name if p.name.startswith("k_") else "driver" if p.name.startswith("drive_") else "library"] = p
    return made


def _warm_up():
    """Import and initialize here what every fork needs, short of loading the kernels and the
    driver (which the forks must read from the cache): each case then costs its compile only."""
    import jitcoop
    import jitcoop.signature  # noqa: F401
    import numba  # noqa: F401 - the library cases compile numba functions
    from jitcoop import examples
    from jitcoop.runtime import compile as C
    from jitcoop.options import KernelOptions
    from jitcoop.runtime import jit, library
    jit._init()
    C.kernel_key(b"", "main", {}, jitcoop.Device().profile, 32, KernelOptions())     # the code's fingerprint
    library.source_fingerprint()
    m = jitcoop.Device().load(examples.path("saxpy"))
    C.generate_ir(m.spirv, None, {0: 16}, m.device.profile, 32, KernelOptions(), annotate=False)


def campaign(count: int, seed: int = 1, log=None) -> Result:
    """`count` damaged entries, each followed by a run in a fresh process (see the module docstring)."""
    from jitcoop.runtime import cache_entry
    _warm_up()

    rng = np.random.default_rng(seed)
    res = Result()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="jitcoop-cache-damage-") as tmp:
        d = Path(tmp)
        old = os.environ.get("JITCOOP_CACHE_DIR")
        os.environ["JITCOOP_CACHE_DIR"] = str(d)
        try:
            paths = _prepare(d)
            pristine = {t: p.read_bytes() for t, p in paths.items()}
            everything = list(pristine.values())
            shares = np.array([s for *_, s in TARGETS])
            sweep = [(t, run, kind) for t, run, _ in TARGETS for kind in DAMAGE]     # every pair first
            for i in range(count):
                if i < len(sweep):
                    t, run, kind = sweep[i]
                else:
                    t, run, _ = TARGETS[int(rng.choice(len(TARGETS), p=shares / shares.sum()))]
                    kind = DAMAGE[int(rng.integers(len(DAMAGE)))]
                path, good = paths[t], pristine[t]
                bad = damage(kind, rng, good, [x for x in everything if x != good])
                path.write_bytes(bad)
                status = _in_child(_child, run, path, bad != good)
                outcome = {0: "right", 1: "WRONG BYTES", 2: "NOT ONE WARNING", 3: "EXCEPTION"}.get(
                    status, f"CRASH (signal {-status})" if status < 0 else f"EXIT {status}")
                if outcome == "right":
                    try:
                        key = cache_entry.header(path.read_bytes())["key"]
                        cache_entry.unpack(path.read_bytes(), _kind(t), key)
                    except Exception as why:                  # noqa: BLE001
                        outcome = f"NOT REPAIRED ({type(why).__name__})"
                res.outcomes[(t, kind, outcome)] += 1
                res.cases += 1
                if outcome != "right":
                    res.failures.append(dict(case=i, entry=t, damage=kind, outcome=outcome, size=len(bad)))
                    if log:
                        log(f"case {i}: {t} {kind} ({len(bad)} bytes): {outcome}")
                path.write_bytes(good)
        finally:
            if old is None:
                os.environ.pop("JITCOOP_CACHE_DIR", None)
            else:
                os.environ["JITCOOP_CACHE_DIR"] = old
    res.seconds = time.perf_counter() - t0
    return res


def _kind(target: str) -> str:
    return {"kernel": "kernel", "kernel_lib": "kernel", "driver": "driver", "library": "library"}[target]


def main(count: int, seed: int, as_json: bool = False) -> int:
    res = campaign(count, seed, log=lambda s: print(s, flush=True))
    if as_json:
        print(json.dumps([[t, d, o, n] for (t, d, o), n in sorted(res.outcomes.items())]))
        return 0
    print(res.table())
    bad = res.cases - res.count("right")
    crashes = sum(n for (_, _, o), n in res.outcomes.items() if o.startswith("CRASH"))
    print(f"{res.cases} damaged entries, {res.count('right')} runs gave numpy's bytes with a CacheWarning and "
          f"left a good entry; {bad} did not ({crashes} crashes); {res.seconds:.0f} s")
    return 1 if bad else 0


# -- a process among many sharing one folder (tests/test_cache.py) --------------------------------

def worker(sizes, seed: int = 0):
    """Compile and run the saxpy example at each workgroup size in `sizes` (each its own kernel,
    in an order of this seed), against numpy; print one JSON line: right/wrong results, kernels
    found in the cache, the CacheWarnings."""
    import jitcoop
    rng = np.random.default_rng(seed)
    x, y0 = saxpy_inputs()
    want = saxpy_reference()
    out = dict(right=0, wrong=0, hits=0, warnings=[])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m = jitcoop.Device().load(ROOT / "jitcoop" / "examples" / "saxpy.spv")
        for wg in rng.permutation(list(sizes)):
            k = m.kernel(spec={0: int(wg)})
            y = y0.copy()
            k.dispatch((-(-N // int(wg)), 1, 1), {0: x, 1: y}, push=struct.pack("<fI", 2.0, N))
            out["right" if y.tobytes() == want else "wrong"] += 1
            out["hits"] += bool(k.cache_hit)
    out["warnings"] = [str(x.message) for x in w if issubclass(x.category, jitcoop.CacheWarning)]
    print(json.dumps(out), flush=True)
