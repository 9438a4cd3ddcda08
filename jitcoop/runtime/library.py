"""The kernel library: numba functions of jitcoop.kernels that generated kernels call.

Generated kernels (LLVM IR, jitcoop.codegen) call the dtype-generic kernels of jitcoop.kernels
(tensor addressing, cooperative vector products, QCOM conversions, format conversions...) through
numba's own calling convention, by symbol name. Each (function, argument types) pair is one
*variant*: compiled by numba the first time any kernel needs it, its code is cut out of numba's
module (the function and what it calls, nothing of numba's Python wrappers), compiled to an object
file for this CPU and kept in the jitcoop cache (`lib-<source hash>/<symbol>.entry`: the object
and its JSON description in one checked entry, runtime/cache_entry.py). A later process adds that
object file to its execution engine directly: with every variant a kernel needs on disk, loading
the kernel imports neither numba nor the kernels' Python modules.

numba's convention, as generated code sees it: `i32 @f(ptr retptr, ptr excinfo, args...)` returns
0 when the function returned normally (its result is at retptr); an array argument is passed as
its seven fields (meminfo, parent, nitems, itemsize, data, shape[ndim], strides[ndim]).

`jitcoop build-library` compiles the variants the bundled examples, benchmarks and tests use ahead
of time (for CI images); `JITCOOP_CACHE_DIR` says where they go.
"""
from __future__ import annotations

import functools
import hashlib
import importlib
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from . import jit
from .cache import read_entry, write_entry

_lock = threading.RLock()

# Scalar argument kinds -> numba type names
_SCALARS = {"i8": "int8", "u8": "uint8", "i16": "int16", "u16": "uint16", "i32": "int32", "u32": "uint32",
            "i64": "int64", "u64": "uint64", "f32": "float32", "f64": "float64", "b": "boolean"}

# External symbols a library object may reference: LLVM emits calls to these C library functions
# itself (memset for a zeroing loop...); they resolve from the process.
_EXTERNAL_OK = re.compile(r"^(llvm\..*|mem(set|cpy|move)|(sqrt|exp|exp2|log|log2|log10|pow|sin|cos|tan|"
                          r"asin|acos|atan|atan2|sinh|cosh|tanh|asinh|acosh|atanh|fmod|floor|ceil|"
                          r"trunc|round|rint|nearbyint|fma|frexp|ldexp|expm1|log1p|cbrt|hypot)f?)$")


@dataclass(frozen=True)
class ArgKind:
    """One parameter of a library function: a scalar ("i64", "f32", "b"...) or a C-contiguous
    array ("f32[:,:]": dtype and number of dimensions)."""
    dtype: str
    ndim: int = 0

    @staticmethod
    def parse(text: str) -> "ArgKind":
        text = text.strip()
        if "[" in text:
            d, dims = text.split("[", 1)
            return ArgKind(d, dims.count(":"))
        return ArgKind(text)

    def __str__(self):
        return self.dtype if not self.ndim else f"{self.dtype}[{','.join(':' * self.ndim)}]"


@dataclass
class Variant:
    """A compiled library function: its symbol and numba-convention LLVM parameter types."""
    symbol: str
    params: list          # LLVM types of the parameters after retptr and excinfo
    ret: str              # LLVM type of the value at retptr ("" for none)
    args: tuple           # ArgKind of each source-level argument
    func: str = ""        # "jitcoop.kernels.module:name"

    def declaration(self) -> str:
        return f"declare i32 @{self.symbol}(ptr, ptr{''.join(', ' + p for p in self.params)})"


@functools.lru_cache(maxsize=None)
def source_fingerprint() -> str:
    """A hash of the kernel library's sources: new code, new variants (read once per process, so
    that every variant a process uses comes from one version of the sources)."""
    root = Path(__file__).resolve().parents[1] / "kernels"
    h = hashlib.sha256()
    for p in sorted(root.glob("*.py")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def _store() -> Path:
    from .cache import cache_dir
    d = cache_dir() / f"lib-{source_fingerprint()}"
    try:
        d.mkdir(exist_ok=True)
    except OSError:
        pass                                # an unwritable cache: write_entry says so
    return d


def _entry(sym: str) -> tuple[Path, str]:
    """The cache entry of a variant: its path and key."""
    return _store() / f"{sym}.entry", f"{source_fingerprint()}/{sym}"


def _described(info) -> dict:
    """A variant's JSON description as its entry holds it, checked (ValueError if not)."""
    if not (isinstance(info, dict) and isinstance(info.get("func"), str) and isinstance(info.get("ret"), str)
            and all(isinstance(info.get(k), list) and all(isinstance(x, str) for x in info[k])
                    for k in ("args", "params"))):
        raise ValueError("not a kernel-library variant's description")
    return info


def _read(sym: str):
    """(description, object) of a variant from the cache, or None (missing, or set aside)."""
    path, key = _entry(sym)
    return read_entry(path, "library", key, _described)


def symbol_of(func: str, args: tuple) -> str:
    mod, name = func.split(":")
    tag = "_".join(str(a).replace("[", "").replace("]", "").replace(":", "d").replace(",", "") for a in args)
    return f"jcl.{mod.rsplit('.', 1)[-1]}.{name}.{tag}"


_variants: dict[str, Variant] = {}
_objects: dict[str, bytes] = {}     # object files read or compiled, until load() adds them to the engine


def variant(func: str, args: str | tuple) -> Variant:
    """The variant of `func` ("jitcoop.kernels.module:name") for `args` (a comma-separated list of
    argument kinds, or ArgKinds), compiled and stored if this is its first use anywhere."""
    if isinstance(args, str):
        args = tuple(ArgKind.parse(a) for a in re.findall(r"[a-z0-9]+(?:\[[:,]*\])?", args))
    sym = symbol_of(func, args)
    v = _variants.get(sym)
    if v is not None:
        return v
    # the LLVM lock too (as load() takes it): a compile's child process is forked under it, so
    # never while this thread holds _lock, which the child's generator may need
    with _lock, jit.lock():
        v = _variants.get(sym)
        if v is not None:
            return v
        got = _read(sym)
        if got is not None and (got[0]["func"], got[0]["args"]) == (func, [str(a) for a in args]):
            info, _objects[sym] = got
            v = Variant(sym, info["params"], info["ret"], args, func)
        else:
            v = _compile(func, args, sym)
        _variants[sym] = v
        return v


def load(variants) -> None:
    """Add the object files of these variants (Variant, or its JSON description as a kernel's
    metadata keeps it) to the execution engine, once per process; one missing from the store (a
    cleared cache, or a kernel cached by another version of the library) is compiled again."""
    for v in variants:
        if isinstance(v, dict):
            v = Variant(v["symbol"], v["params"], v["ret"], tuple(ArgKind.parse(a) for a in v["args"]), v["func"])
        if jit.is_loaded(v.symbol):
            continue
        # under the LLVM lock too: numba's compile uses LLVM, and a compile's child process
        # (runtime.limit; a background optimized compile's: runtime.tiers) is forked only
        # while no other thread is inside LLVM
        with _lock, jit.lock():
            obj = _objects.pop(v.symbol, None)
            if obj is None:
                got = _read(v.symbol)
                if got is None:
                    _compile(v.func, v.args, v.symbol)
                    obj = _objects.pop(v.symbol)
                else:
                    obj = got[1]
            jit.load_object(v.symbol, obj, [])


def _numba_type(kind: ArgKind):
    from numba import types
    t = getattr(types, _SCALARS[kind.dtype])
    return types.Array(t, kind.ndim, "C") if kind.ndim else t


def _compile(func: str, args: tuple, sym: str) -> Variant:
    """Compile a variant with numba, cut it out of numba's module and store its object file."""
    import llvmlite.binding as llvm
    from numba.core.registry import cpu_target
    modname, name = func.split(":")
    disp = getattr(importlib.import_module(modname), name)
    sig = tuple(_numba_type(a) for a in args)
    disp.compile(sig)
    cres = disp.overloads[sig]
    ctx = cpu_target.target_context
    ret_t = cres.signature.return_type
    ret = "" if str(ret_t) == "none" else str(ctx.data_model_manager[ret_t].get_return_type())
    src = cres.library._get_module_for_linking()
    jit._init()
    mod = llvm.parse_bitcode(src.as_bitcode())
    fn = mod.get_function(cres.fndesc.llvm_func_name)
    fn.name = sym
    fn.linkage = llvm.Linkage.external
    params = [str(a.type) for a in fn.arguments][2:]
    for f in mod.functions:
        if not f.is_declaration and f.name != sym:
            f.linkage = llvm.Linkage.internal
    for g in mod.global_variables:
        if not g.is_declaration:
            g.linkage = llvm.Linkage.internal
    pm = llvm.create_new_module_pass_manager()
    pm.add_global_dead_code_eliminate_pass()
    pm.add_strip_dead_prototype_pass()
    pb = llvm.create_pass_builder(jit._init()["tm"], llvm.create_pipeline_tuning_options(0))
    pm.run(mod, pb)
    missing = [f.name for f in mod.functions if f.is_declaration and not _EXTERNAL_OK.match(f.name)
               and f.name not in jit.NRT_SYMBOLS]
    missing += [g.name for g in mod.global_variables if g.is_declaration]
    if missing:
        raise RuntimeError(f"kernel library function {func}{tuple(map(str, args))} needs symbols only "
                           f"numba has ({', '.join(missing)})")
    obj = jit._init()["tm"].emit_object(mod)
    v = Variant(sym, params, ret, args, func)
    described = {"func": func, "args": [str(a) for a in args], "params": params, "ret": ret}
    path, key = _entry(sym)
    write_entry(path, "library", key, described, obj)
    _objects[sym] = obj
    return v
