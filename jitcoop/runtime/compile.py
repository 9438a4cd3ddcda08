"""Kernels from SPIR-V: generate LLVM IR, compile it, cache the machine code on disk, load it.

A kernel's cache entry is one file in `JITCOOP_CACHE_DIR`, `k_<key>.entry`, named by a hash of
everything the code depends on (module bytes, entry point, spec constants, device profile and
subgroup size, kernel options with the compile tier, jitcoop's code generator and kernel library,
the host CPU and LLVM version; a kernel compiled at both tiers has two entries:
jitcoop.runtime.tiers): the object file (the kernel function `kernel.<key>`) and, as JSON, what the
runtime needs to call it (KernelMeta: bindings, sizes, failure sites, constants);
runtime/cache_entry.py has the format and its checks. A later process (or a later call) checks the
entry and adds the object to the process's execution engine: no code generation, no LLVM passes.
An entry that fails its checks is compiled again, with a CacheWarning. A compile with a time limit
(`KernelOptions.compile_timeout`, 120 s by default) runs in a child process that is killed when
the limit passes (jitcoop.runtime.limit): a SpirvError, and nothing left running.
"""
from __future__ import annotations

import hashlib
import math
import threading
from dataclasses import dataclass
from pathlib import Path

from ..errors import JitcoopError, SpirvError
from . import jit, library
from . import limit as limit_mod
from ..codegen.meta import KernelMeta
from . import cache
from .cache import cache_dir, read_entry, write_entry


@dataclass
class Compiled:
    address: int          # i64 kernel(wg_begin, wg_end, grid, bind, push, scratch, ranges, nranges, err,
                          # cancel), called by each dispatch thread's driver (runtime/driver.py)
    meta: object          # jitcoop.codegen.meta.KernelMeta
    ir: str | None        # the LLVM IR (None when served from the disk cache)
    cache_hit: bool
    key: str
    tier: str = "optimized"   # the compile tier of this code (jitcoop.runtime.tiers)


def generator_fingerprint() -> str:
    """A hash of jitcoop's code generator and analyses: new code, new cache entries."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    files = [p for d in ("codegen", "analysis", "spirv", "devices") for p in (root / d).rglob("*.py")]
    files += [root / "options.py", Path(__file__), Path(__file__).with_name("jit.py")]
    for p in sorted(files):
        if p.name in ("asm.py", "disasm.py"):
            continue
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    h.update(library.source_fingerprint().encode())
    return h.hexdigest()[:16]


_fingerprint: list = []
_memo: dict = {}
_memo_lock = threading.Lock()


def kernel_key(data: bytes, entry, spec: dict, profile, subgroup_size: int, options) -> str:
    if not _fingerprint:
        _fingerprint.append(generator_fingerprint())
    h = hashlib.sha256()
    for part in (_fingerprint[0], jit.host_key(), data, entry, sorted(spec.items()), profile.name,
                 subgroup_size, options.key()):
        h.update(part if isinstance(part, bytes) else repr(part).encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def compile_kernel(module, entry, spec: dict, profile, subgroup_size: int, options, *,
                   cached_only: bool = False, background: bool = False) -> Compiled | None:
    """The compiled kernel at the tier options.tier ("fast" or "optimized": each tier has its
    own key, so the disk cache keeps both): from this process's memory, the disk cache, or
    compiled now. cached_only: None rather than compiling. background: compiled in a child
    process even without a time limit (the LLVM lock stays free for the process's other
    compiles: jitcoop.runtime.tiers), which writes the disk cache entry itself and finishes on
    its own if this process exits first (a test suite's processes often exit before their
    optimized compiles end: the next run then finds them)."""
    assert options.tier in ("fast", "optimized"), options.tier
    entry = module.entry_point(entry).name          # None and the first entry point's name: one key
    key = kernel_key(module.data, entry, spec, profile, subgroup_size, options)
    with _memo_lock:
        got = _memo.get(key)
    if got is not None:
        return Compiled(got.address, got.meta, got.ir, True, key, options.tier)
    path = cache_dir() / f"k_{key}.entry"
    ir = None
    seen = cache.identity(path)
    got = _read(path, key)
    if got is None:
        if cached_only:
            return None
        limit = options.compile_timeout or (math.inf if background else 0)
        with cache.compiling(path, options.compile_timeout) as waited:
            if waited or cache.identity(path) != seen:      # another process wrote it meanwhile
                got = _read(path, key)
            if got is None:
                _load_generator()
                args = (entry, spec, profile, subgroup_size, options, key)
                if background:          # written by the compiling child: it outlives this process
                    def work():
                        out = _generate(module, *args)
                        _write(path, key, *out[1:])
                        return out
                    ir, meta, obj = _with_limit(lambda: limit_mod.run_limited(work, limit, _what(entry), True), entry)
                elif limit:             # in a compile process kept for the next compile
                    from . import compilers     # (here: a process whose kernels are all cached never needs it)
                    ir, meta, obj = _with_limit(lambda: compilers.run(_generate, module, args, limit, _what(entry)), entry)
                else:
                    ir, meta, obj = _with_limit(lambda: _generate(module, *args), entry)
                if not background:
                    _write(path, key, meta, obj)
    hit = got is not None
    if hit:
        meta, obj = got
    library.load(meta.library)
    addr = jit.load_object(key, obj, [f"kernel.{key}"])[f"kernel.{key}"]
    c = Compiled(addr, meta, ir, hit, key, options.tier)
    with _memo_lock:
        _memo[key] = c
    return c


def generator_options(options):
    """The options the code generator sees at options.tier: the fast tier leaves lane groups out
    (the vectorizer and the larger module it makes cost most of a small kernel's compile)."""
    return options.replace(lane_groups=False) if options.tier == "fast" else options


def _read(path, key: str):
    """(KernelMeta, object) of the kernel's disk cache entry, or None (missing, or set aside)."""
    return read_entry(path, "kernel", key, KernelMeta.from_json)


def _write(path, key: str, meta, obj: bytes):
    try:
        described = meta.to_json()
    except TypeError as e:              # a value of the generator's that the format lacks: a bug
        cache.warn(f"jitcoop: kernel {key} is not written to the disk cache ({e}; please report this)")
        return
    write_entry(path, "kernel", key, described, obj)


def _load_generator():
    """Import the code generator and its rules in this process before a compile's child is
    forked: every later child then starts with them (a child's own imports die with it, and a
    process whose kernels all come from the disk cache never imports them: Module load checks
    instructions against the rules' index)."""
    from ..codegen import emitter, rules  # noqa: F401 - imported to be inherited
    rules.load_all()


def _generate(module, entry, spec, profile, subgroup_size, options, key):
    from ..codegen.emitter import KernelGen
    from ..spirv.specialize import Specialization
    fast = options.tier == "fast"
    options = generator_options(options)
    gen = KernelGen(module, Specialization(module, spec), entry, subgroup_size, options, profile=profile)
    ir, meta = gen.build(f"kernel.{key}")
    try:
        obj = jit.compile_ir(ir, options.opt_level, fast=fast)
    except RuntimeError as e:
        if not meta.lane_group:
            raise
        # the lane groups' vector copy is the one part made from the generated IR rather than
        # from SPIR-V: should LLVM refuse it, the kernel still runs one invocation at a time
        why = f"internal error in the lane-group vectorizer (LLVM: {str(e).splitlines()[0]})"
        gen = KernelGen(module, Specialization(module, spec), entry, subgroup_size,
                        options.replace(lane_groups=False), profile=profile)
        ir, meta = gen.build(f"kernel.{key}")
        meta.lane_group_why = why
        obj = jit.compile_ir(ir, options.opt_level)
    return ir, meta, obj


def generate_ir(module, entry, spec, profile, subgroup_size, options, annotate=True) -> tuple[str, object]:
    """The LLVM IR of a kernel and its metadata, without compiling it (`jitcoop dis --generated`,
    `Kernel.source`), each SPIR-V instruction's code under a comment naming it; at the fast tier
    when options.tier is "fast", else the optimized tier's."""
    from ..codegen.emitter import KernelGen
    from ..spirv.specialize import Specialization
    gen = KernelGen(module, Specialization(module, spec), entry, subgroup_size,
                    generator_options(options), profile=profile)
    gen.annotate = annotate
    return gen.build("kernel")


def _what(entry) -> str:
    return f"entry point {entry!r}"


def _with_limit(compile_, entry):
    """compile_(): a compile in this process or, under a time limit, in a child process stopped
    past it (runtime.compilers, runtime.limit); an exception that is not jitcoop's becomes a
    SpirvError asking for a report."""
    try:
        return compile_()
    except (JitcoopError, KeyboardInterrupt, MemoryError):
        raise
    except Exception as e:                  # noqa: BLE001 - a bug of the generator, reported as such
        raise SpirvError(f"internal error while compiling {_what(entry)}: {type(e).__name__}: {e} "
                         "(please report this with the shader)") from e
