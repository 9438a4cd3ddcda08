"""Dispatch fuzzing: real shaders with their recipes' dispatches, spoiled one or two ways (bindings
missing, extra, too small, misaligned, of another dtype, strided, read-only, not arrays at all;
push constants missing, short, of the wrong kind; grids empty, negative, huge, not integers;
thread counts and timeouts out of range). Each case must end with a BindingError, an
ExecutionError or a run, and after a failure every array the user passed must be as it was.

A case is {"kind": "dispatch", "recipe": shader, "seed": n}: the seed draws the spoilings, so the
worker rebuilds the same case from those two values.
"""
from __future__ import annotations

import random
import time

import numpy as np

_BAD_VALUES = (lambda a: list(a.reshape(-1)[:4]), lambda a: a.tobytes(), lambda a: None, lambda a: 7,
               lambda a: np.array([object()] * 4), lambda a: np.float32(1.0), lambda a: "buffer")


def _pick(rng, bindings):
    return rng.choice(sorted(bindings, key=repr)) if bindings else None


def _bytes_of(s, key):
    """The binding's array where it has bytes to rearrange (not an array of Python objects, which
    an earlier spoiling may have put there), else None."""
    a = s["bindings"].get(key)
    return a if isinstance(a, np.ndarray) and not a.dtype.hasobject else None


def drop_binding(rng, k, s):
    key = _pick(rng, s["bindings"])
    if key is None:
        return None
    del s["bindings"][key]
    return f"binding {key} left out"


def extra_binding(rng, k, s):
    key = (rng.choice((0, 1, 7)), rng.choice((0, 5, 31, 1000)))
    s["bindings"][key] = np.zeros(64, np.uint8)
    return f"binding {key} added"


def shrink(rng, k, s):
    key = _pick(rng, s["bindings"])
    a = _bytes_of(s, key)
    if a is None or a.nbytes == 0:
        return None
    n = rng.choice((0, 1, rng.randrange(a.nbytes), a.nbytes - 1))
    s["bindings"][key] = np.ascontiguousarray(a).reshape(-1).view(np.uint8)[:n].copy()
    return f"binding {key}: {n} of its {a.nbytes} bytes"


def misalign(rng, k, s):
    key = _pick(rng, s["bindings"])
    a = _bytes_of(s, key)
    if a is None:
        return None
    off = rng.randrange(1, 16)
    raw = np.zeros(a.nbytes + 16, np.uint8)
    raw[off:off + a.nbytes] = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
    s["bindings"][key] = np.ndarray(a.shape, a.dtype, buffer=raw, offset=off)
    return f"binding {key}: at byte offset {off} of its memory"


def other_dtype(rng, k, s):
    key = _pick(rng, s["bindings"])
    a = _bytes_of(s, key)
    if a is None:
        return None
    dt = rng.choice((np.float64, np.int8, np.uint16, np.float16, np.bool_, np.complex64))
    if rng.random() < 0.5 and a.nbytes % np.dtype(dt).itemsize == 0:
        s["bindings"][key] = np.ascontiguousarray(a).reshape(-1).view(np.uint8).view(dt)
        return f"binding {key}: its bytes as {np.dtype(dt).name}"
    try:
        s["bindings"][key] = np.ascontiguousarray(a).astype(dt)
    except (TypeError, ValueError):     # a structured dtype numpy does not convert
        return None
    return f"binding {key}: converted to {np.dtype(dt).name}"


def strided(rng, k, s):
    key = _pick(rng, s["bindings"])
    a = s["bindings"].get(key)
    if not isinstance(a, np.ndarray) or a.ndim != 1:
        return None
    big = np.zeros(2 * a.size, a.dtype)
    big[::2] = a
    s["bindings"][key] = big[::2]
    return f"binding {key}: a strided view"


def read_only(rng, k, s):
    key = _pick(rng, s["bindings"])
    a = s["bindings"].get(key)
    if not isinstance(a, np.ndarray):
        return None
    a = a.copy()
    a.flags.writeable = False
    s["bindings"][key] = a
    return f"binding {key}: read-only"


def not_an_array(rng, k, s):
    key = _pick(rng, s["bindings"])
    a = s["bindings"].get(key)
    if not isinstance(a, np.ndarray):
        return None
    i = rng.randrange(len(_BAD_VALUES))
    s["bindings"][key] = _BAD_VALUES[i](a)
    return f"binding {key}: a {type(s['bindings'][key]).__name__}"


def bad_key(rng, k, s):
    key = rng.choice((1.0, None, (0, 1, 2), (0,), "no_such_name", -1, (-1, 0), ("a", 1)))
    s["bindings"][key] = np.zeros(64, np.uint8)
    return f"binding key {key!r}"


def push(rng, k, s):
    p = s["push"]
    raw = b"" if p is None else bytes(p) if isinstance(p, (bytes, bytearray)) else np.ascontiguousarray(p).tobytes()
    roll = rng.randrange(6)
    if roll == 0:
        s["push"] = None
    elif roll == 1:
        s["push"] = raw[:rng.randrange(len(raw) + 1)]
    elif roll == 2:
        s["push"] = raw + bytes(rng.randrange(1, 64))
    elif roll == 3:
        s["push"] = rng.choice(("push", [1, 2, 3], 5, np.array([object()]), {"no_such_member": 1}))
    elif roll == 4:
        s["push"] = bytes(rng.randrange(256) for _ in range(len(raw)))
    else:
        s["push"] = np.frombuffer(raw, np.uint8).copy() if raw else np.zeros(4, np.float32)
    return f"push constants: {type(s['push']).__name__} of {len(s['push']) if hasattr(s['push'], '__len__') else '-'}"


def grid(rng, k, s):
    s["grid"] = rng.choice((0, (0, 1, 1), -1, (1, -3), 2**31, (1, 65536), (2**40, 1, 1), 2**70, 2.5, "8",
                            None, (1, 1, 1, 1), (), (3, 2), np.int64(2), (np.uint8(2), 1)))
    return f"grid {s['grid']!r}"


def run_options(rng, k, s):
    which = rng.choice(("threads", "timeout"))
    s[which] = rng.choice((-1, 0.5, "2", 1e9, float("nan"), True, 0)) if which == "threads" else \
        rng.choice((-1, 0, "1", float("nan"), 1e-9, True))
    return f"{which}={s[which]!r}"


MUTATIONS = (drop_binding, extra_binding, shrink, misalign, other_dtype, strided, read_only, not_an_array,
             bad_key, push, grid, run_options)


def run_dispatch_case(case: dict) -> dict:
    """One spoiled dispatch of a recipe's kernel (kernels are kept per worker process)."""
    import jitcoop
    from jitcoop.errors import BindingError, ExecutionError
    from metamorphic.recipes import RECIPES, Inputs

    from .case import _failure, _raw, signature

    r = RECIPES[case["recipe"]]
    rng = random.Random(case["seed"])
    out = {"outcome": None, "stage": "dispatch"}
    key = (r.shader, r.profile, r.sg)
    if key not in _KERNELS:
        dev = jitcoop.Device(r.profile, subgroup_size=r.sg)
        try:
            _KERNELS[key] = (dev, dev.load(r.path.read_bytes()).kernel(r.entry, spec=dict(r.spec), **r.options))
        except jitcoop.SpirvError as e:     # the shader itself does not compile here: nothing to spoil
            return {"outcome": "skipped", "stage": "kernel", "message": str(e), "signature": None}
    dev, k = _KERNELS[key]
    inputs = Inputs(np.random.default_rng(case["seed"]), dev)
    d = r.make(inputs)
    s = {"grid": d.grid, "bindings": dict(d.bindings), "push": d.push, "threads": 1, "timeout": 10.0}
    done = []
    for _ in range(rng.choice((1, 1, 2))):
        for _attempt in range(5):
            what = rng.choice(MUTATIONS)(rng, k, s)
            if what:
                done.append(what)
                break
    out["mutations"] = done
    arrays = [a for a in s["bindings"].values() if isinstance(a, np.ndarray) and not a.dtype.hasobject]
    arrays += [b.array for b in inputs.buffers]
    before = [_raw(a) for a in arrays]
    t0 = time.perf_counter()
    try:
        k.dispatch(s["grid"], s["bindings"], push=s["push"], threads=s["threads"], timeout=s["timeout"])
        out["outcome"] = "success"
    except BindingError as e:
        out["outcome"] = "binding"
        out["message"] = str(e)
    except ExecutionError as e:
        out["outcome"] = "execution"
        out["message"] = str(e)
    except MemoryError as e:
        _failure(out, "memory", e)
    except Exception as e:      # noqa: BLE001 - what the fuzzer looks for
        _failure(out, "other", e)
    out["run_s"] = time.perf_counter() - t0
    if out["outcome"] != "success" and any(_raw(a).tobytes() != b.tobytes() for a, b in zip(arrays, before)):
        out["outcome"] = "changed"
        out["detail"] = "a failed dispatch changed the user's arrays"
    out["signature"] = signature(out)
    return out


_KERNELS: dict = {}
