"""One fuzz case: load -> kernel -> dispatch of a module, classified by how it ends.

Runs inside a worker process (tests/fuzz/worker.py) that has memory and CPU limits; the parent
(tests/fuzz/runner.py) handles what the worker cannot report itself (a crash, a hang, a kill by
the memory limit).

Outcomes, in the order a case can reach them:

    spirv_load       SpirvError from Device.load (a clean refusal)
    spirv_kernel     SpirvError from Module.kernel
    compile_timeout  the compile ran past compile_timeout and stopped with a SpirvError (bounded)
    binding          BindingError (kernel() or dispatch())
    execution        ExecutionError (dispatch(); a dispatch timeout included)
    success          the dispatch ran
    internal         SpirvError "internal error while compiling": a check is missing (a failure)
    other            any other exception (a failure)
    memory           MemoryError (a failure: compile memory must stay bounded)
    changed          a failed dispatch changed the user's arrays (a failure)
  and from the parent:
    crash            the worker died (a signal, an abort)
    timeout          the worker did not answer within the case's wall-clock limit

A case is a dict: data (the module's bytes), shader (the seed it was made from), recipe (a
tests/metamorphic recipe's name, or None: bindings made up from the kernel's metadata), seed (for
the inputs), fit (adapt the recipe's bindings, push constants and spec constants to what the
mutant's kernel asks for, so that more mutants run), compile_timeout, dispatch_timeout.
"""
from __future__ import annotations

import re
import resource
import time
import traceback

import numpy as np

FAILURES = ("internal", "other", "memory", "changed", "crash", "timeout")
CLEAN = ("spirv_load", "spirv_kernel", "compile_timeout", "binding", "execution", "success")
OUTCOMES = CLEAN + FAILURES

# Bindings larger than this are not made up (a mutated array length may ask for gigabytes): the
# case then ends with the BindingError of the missing buffer.
_MAX_MADE_UP = 64 << 20


def run_case(case: dict) -> dict:
    import jitcoop
    from jitcoop.errors import BindingError, ExecutionError, SpirvError
    from metamorphic.recipes import RECIPES, Inputs

    out = {"outcome": None, "stage": "load", "compile_s": None, "run_s": None}
    recipe = RECIPES.get(case.get("recipe") or "")
    rng = np.random.default_rng(case.get("seed", 0))
    arrays = []
    try:
        dev = jitcoop.Device(recipe.profile, subgroup_size=recipe.sg) if recipe else jitcoop.Device()
        mod = dev.load(case["data"])
        out["stage"] = "kernel"
        spec = dict(recipe.spec) if recipe else {}
        if case.get("fit", True):
            spec = _fit_spec(mod, spec)
        options = {**(recipe.options if recipe else {}), "compile_timeout": case.get("compile_timeout", 60.0)}
        t0, c0 = time.perf_counter(), _cpu()
        try:
            k = mod.kernel(recipe.entry if recipe else None, spec=spec, **options)
        finally:
            # CPU seconds say how much work a compile was on a loaded machine, where wall-clock
            # seconds mostly say how busy the machine was
            out["compile_cpu_s"] = _cpu() - c0
            out["compile_s"] = time.perf_counter() - t0
        out["stage"] = "dispatch"
        inputs = Inputs(rng, dev)
        if recipe:
            d = recipe.make(inputs)
            grid, bindings, push = d.grid, dict(d.bindings), d.push
        else:
            grid, bindings, push = 2, {}, None
        if case.get("fit", True) or not recipe:
            bindings, push = _fit_bindings(k, bindings, push, rng)
        arrays = [a for a in bindings.values() if isinstance(a, np.ndarray)] + [b.array for b in inputs.buffers]
        before = [_raw(a) for a in arrays]
        t0 = time.perf_counter()
        try:
            k.dispatch(grid, bindings, push=push, threads=case.get("threads", 1),
                       timeout=case.get("dispatch_timeout", 10.0))
        except BaseException:
            if any(_raw(a).tobytes() != b.tobytes() for a, b in zip(arrays, before)):
                out["outcome"] = "changed"
                out["detail"] = "a failed dispatch changed the user's arrays"
            raise
        out["run_s"] = time.perf_counter() - t0
        out["outcome"] = "success"
    except SpirvError as e:
        msg = str(e)
        if "internal error while compiling" in msg:
            _failure(out, "internal", e.__cause__ or e)
        elif "took longer than its limit" in msg:
            out["outcome"] = "compile_timeout"
        else:
            out["outcome"] = out["outcome"] or f"spirv_{'load' if out['stage'] == 'load' else 'kernel'}"
            out["located"] = e.offset is not None or e.opname is not None
        out.setdefault("message", msg)
        out["reason"] = e.detail
    except BindingError as e:
        out["outcome"] = out["outcome"] or "binding"
        out["message"] = str(e)
    except ExecutionError as e:
        out["outcome"] = out["outcome"] or "execution"
        out["message"] = str(e)
        out["reason"] = e.detail
        out["located"] = e.offset is not None
    except MemoryError as e:
        _failure(out, "memory", e)
    except Exception as e:      # noqa: BLE001 - every other escape is what the fuzzer looks for
        _failure(out, "other", e)
    out["signature"] = signature(out)
    return out


def _failure(out, outcome, e):
    if out["outcome"] != "changed":
        out["outcome"] = outcome
    out["exc"] = type(e).__name__
    out["message"] = f"{type(e).__name__}: {e}"[:2000]
    out["frame"] = jitcoop_frame(e)
    out["traceback"] = "".join(traceback.format_exception(type(e), e, e.__traceback__))[-6000:]


def jitcoop_frame(e: BaseException) -> str:
    """The innermost frame in jitcoop's own code that the exception passed: where a check is
    missing."""
    frames = traceback.extract_tb(e.__traceback__)
    ours = [f for f in frames if "/jitcoop/" in f.filename]
    f = (ours or frames or [None])[-1]
    if f is None:
        return "?"
    path = f.filename.split("/jitcoop/", 1)[-1] if "/jitcoop/" in f.filename else f.filename.rsplit("/", 1)[-1]
    return f"{path}:{f.name}"


def signature(out: dict) -> str | None:
    """What tells two failures apart: the outcome, the exception type and the jitcoop function it
    escaped from (for crashes and timeouts, the stage). None for a clean outcome."""
    o = out["outcome"]
    if o in ("internal", "other", "memory"):
        return f"{o}:{out.get('exc')}:{out.get('frame')}:{_gist(out.get('message', ''))}"
    if o == "changed":
        return f"changed:{out.get('stage')}"
    if o in ("crash", "timeout"):
        return f"{o}:{out.get('stage')}:{out.get('detail', '')}"
    return None


def _gist(message: str) -> str:
    """The kind of an exception's message without names, numbers and quoted parts: its first
    line, or for an LLVM IR error the line that says what LLVM complains about."""
    lines = message.split(": ", 1)[-1].splitlines() or [""]
    line = next((ln.split("error: ", 1)[1] for ln in lines if "error: " in ln), lines[0])
    line = re.sub(r"'[^']*'|%[\w.]+|\b\d+\b", "", line)
    return re.sub(r"\s+", " ", line).strip()[:60]


def normalized(message: str) -> str:
    """A message with numbers and ids taken out (for grouping clean errors by kind)."""
    return re.sub(r"%?\b\d+\b|0x[0-9a-f]+", "N", message)[:120]


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the worker runs one case at a time;
    a compile with a time limit runs in a forked child, jitcoop/runtime/limit.py, reaped before
    kernel() returns)."""
    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))


def _raw(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8).copy()


def _fit_spec(mod, spec: dict) -> dict:
    """The recipe's spec constants that the (mutated) module still has SpecIds for."""
    have = {args[0] for decs in mod.spirv.decorations.values() for n, args in decs if n == "SpecId" and args}
    return {k: v for k, v in spec.items() if not isinstance(k, int) or k in have}


def _fit_bindings(k, bindings: dict, push, rng):
    """The recipe's bindings the kernel uses (grown where the kernel needs more bytes), random
    bytes for those it lacks, and push constants padded to the block's size."""
    meta = k.meta
    norm = {(0, key) if isinstance(key, int) else tuple(key): v for key, v in bindings.items()}
    out = {}
    for b in meta.bindings:
        key = (b.set, b.binding)
        if key in out:
            continue
        v = norm.get(key)
        need = int(b.min_size)
        if isinstance(v, np.ndarray) and v.nbytes >= need:
            out[key] = v
        elif need <= _MAX_MADE_UP and not (v is not None and not isinstance(v, np.ndarray)):
            n = max(need, 256)
            grown = rng.integers(0, 256, n, dtype=np.uint8)
            if isinstance(v, np.ndarray):
                raw = np.ascontiguousarray(v).reshape(-1).view(np.uint8)
                grown[:raw.size] = raw
            out[key] = grown
        elif v is not None:
            out[key] = v
    if meta.push_size:
        p = b"" if push is None else (bytes(push) if isinstance(push, (bytes, bytearray)) else
                                      np.ascontiguousarray(push).tobytes())
        if len(p) < meta.push_size and meta.push_size <= _MAX_MADE_UP:
            p += rng.integers(0, 256, meta.push_size - len(p), dtype=np.uint8).tobytes()
        push = p
    return out, push
