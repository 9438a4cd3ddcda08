"""Machine code from LLVM IR: one process-wide LLVM JIT, object files cached on disk.

Generated kernels are LLVM IR text (jitcoop.codegen). `compile_ir` optimizes a module for the host
CPU and turns it into an object file; `load_object` adds an object file to the process's execution
engine and returns the addresses of the functions asked for. Objects of the kernel library
(jitcoop.runtime.library) go into the same engine, so a kernel's calls into the library resolve by
symbol name when its object is added. An object file on disk is all a later process needs: it is
added to the engine without parsing or optimizing anything (no numba, no LLVM passes).
"""
from __future__ import annotations

import ctypes
import threading

import llvmlite.binding as llvm

_lock = threading.RLock()        # LLVM's passes and engine are used by one thread at a time
_state: dict = {}


def lock():
    """The LLVM lock: held, no other thread of this process is inside jitcoop's LLVM work (a
    compile's child process is forked under it: jitcoop.runtime.limit)."""
    return _lock


def reset_lock_after_fork():
    """In a forked child: the lock the parent held while forking, replaced by a free one."""
    global _lock
    _lock = threading.RLock()

# The part of numba's runtime (NRT) that compiled kernel-library functions call when they make a
# scratch array (np.empty): a MemInfo header (refct, dtor, dtor_info, data, size, allocator) and
# its data in one malloc'ed block, freed when the reference count drops to zero; and numba's
# frexp/ldexp helpers (zero, inf and NaN answered directly, as numba's _helperlib does). With
# these in the engine a library object runs without numba loaded.
_NRT_SHIM = """
declare ptr @malloc(i64)
declare void @free(ptr)
define ptr @NRT_MemInfo_alloc_aligned(i64 %size, i32 %align) {
  %a = zext i32 %align to i64
  %pad = shl i64 %a, 1
  %n0 = add i64 %size, 48
  %n = add i64 %n0, %pad
  %mi = call ptr @malloc(i64 %n)
  %null = icmp eq ptr %mi, null
  br i1 %null, label %fail, label %ok
fail:
  ret ptr null
ok:
  %base = ptrtoint ptr %mi to i64
  %d0 = add i64 %base, 48
  %am1 = sub i64 %a, 1
  %d1 = add i64 %d0, %am1
  %mask = xor i64 %am1, -1
  %d = and i64 %d1, %mask
  %data = inttoptr i64 %d to ptr
  store i64 1, ptr %mi
  %f1 = getelementptr i8, ptr %mi, i64 8
  store ptr null, ptr %f1
  %f2 = getelementptr i8, ptr %mi, i64 16
  store ptr null, ptr %f2
  %f3 = getelementptr i8, ptr %mi, i64 24
  store ptr %data, ptr %f3
  %f4 = getelementptr i8, ptr %mi, i64 32
  store i64 %size, ptr %f4
  %f5 = getelementptr i8, ptr %mi, i64 40
  store ptr null, ptr %f5
  ret ptr %mi
}
define ptr @NRT_MemInfo_alloc_safe_aligned(i64 %size, i32 %align) {
  %mi = call ptr @NRT_MemInfo_alloc_aligned(i64 %size, i32 %align)
  ret ptr %mi
}
define void @NRT_MemInfo_call_dtor(ptr %mi) {
  call void @free(ptr %mi)
  ret void
}
define void @NRT_Free(ptr %p) {
  call void @free(ptr %p)
  ret void
}
declare double @frexp(double, ptr)
declare double @ldexp(double, i32)
declare double @llvm.fabs.f64(double)
define double @numba_frexp(double %x, ptr %e) {
  %a = call double @llvm.fabs.f64(double %x)
  %fin = fcmp one double %a, 0x7FF0000000000000
  %nz = fcmp une double %x, 0.0
  %ordinary = and i1 %fin, %nz
  br i1 %ordinary, label %go, label %keep
go:
  %m = call double @frexp(double %x, ptr %e)
  ret double %m
keep:
  store i32 0, ptr %e
  ret double %x
}
define double @numba_ldexp(double %x, i32 %k) {
  %a = call double @llvm.fabs.f64(double %x)
  %fin = fcmp one double %a, 0x7FF0000000000000
  %nz = fcmp une double %x, 0.0
  %kz = icmp ne i32 %k, 0
  %o1 = and i1 %fin, %nz
  %ordinary = and i1 %o1, %kz
  br i1 %ordinary, label %go, label %keep
go:
  %r = call double @ldexp(double %x, i32 %k)
  ret double %r
keep:
  ret double %x
}
"""
# numba's helpers (from its _helperlib, with the same answers) that library functions may call.
NRT_SYMBOLS = ("NRT_MemInfo_alloc_aligned", "NRT_MemInfo_alloc_safe_aligned", "NRT_MemInfo_call_dtor",
               "NRT_Free", "malloc", "free", "numba_frexp", "numba_ldexp")


# The oldest LLVM that parses the generated IR: opaque pointers (`ptr`) throughout. llvmlite 0.45
# has LLVM 20; 0.44's LLVM 15 fails on the first line of every module.
MIN_LLVM = (20,)


def require_llvm(version=None, llvmlite_version=None):
    """Raise an ImportError saying what to install where llvmlite's LLVM is older than MIN_LLVM
    (arguments: the version tuples to check, llvmlite's own by default)."""
    import llvmlite
    version = tuple(llvm.llvm_version_info if version is None else version)
    if version < MIN_LLVM:
        raise ImportError(f"jitcoop needs llvmlite 0.45 or newer (LLVM {MIN_LLVM[0]} or newer); this is llvmlite "
                          f"{llvmlite_version or llvmlite.__version__} with LLVM {'.'.join(map(str, version))}: "
                          "pip install -U 'llvmlite>=0.45' 'numba>=0.62'")


def _init():
    """The target machine and the execution engine, made once per process."""
    if _state:
        return _state
    with _lock:
        if _state:
            return _state
        require_llvm()
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        target = llvm.Target.from_default_triple()
        features = llvm.get_host_cpu_features().flatten()
        cpu = llvm.get_host_cpu_name()
        tm = target.create_target_machine(cpu=cpu, features=features, opt=3, reloc="static",
                                          codemodel="jitdefault", jit=True)
        # the fast tier's code generator: LLVM's -O0 back end (fast instruction selection, the
        # fast register allocator), 3-9x quicker than -O3's on generated kernels
        tm_fast = target.create_target_machine(cpu=cpu, features=features, opt=0, reloc="static",
                                               codemodel="jitdefault", jit=True)
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(_NRT_SHIM), tm)
        _state.update(tm=tm, tm_fast=tm_fast, engine=engine, cpu=cpu, features=features, loaded=set(),
                      triple=tm.triple, layout=str(tm.target_data))
    return _state


def host_key() -> str:
    """What compiled code depends on besides its IR: the CPU it was tuned for (part of cache keys)."""
    s = _init()
    return f"{s['triple']}|{s['cpu']}|{s['features']}|llvm{'.'.join(map(str, llvm.llvm_version_info))}"


def vector_registers() -> tuple[int, int]:
    """The host's SIMD registers as (bits each, how many): what explicit vector code (MulAdd
    blocks held in registers over the K loop) is sized for. AVX-512: 32 of 512 bits; AVX/AVX2:
    16 of 256; otherwise SSE's 16 of 128."""
    f = _init()["features"].split(",")
    if "+avx512f" in f:
        return 512, 32
    if "+avx" in f:
        return 256, 16
    return 128, 16


def data_layout() -> str:
    return _init()["layout"]


def target_triple() -> str:
    return _init()["triple"]


def optimize(mod: "llvm.ModuleRef", level: int = 3):
    """Run LLVM's standard pipeline at `level` (0 leaves the module as it is)."""
    if level <= 0:
        return
    s = _init()
    pto = llvm.create_pipeline_tuning_options(speed_level=level)
    pb = llvm.create_pass_builder(s["tm"], pto)
    pb.getModulePassManager().run(mod, pb)


def optimize_fast(mod: "llvm.ModuleRef"):
    """The fast tier's passes: values out of memory into registers (SROA: the generator keeps
    every SPIR-V variable and lane value in an alloca) and dead code gone, and nothing that
    costs more than it saves on code run a few times (no inlining, unrolling or vectorizing)."""
    s = _init()
    pto = llvm.create_pipeline_tuning_options(speed_level=0)
    pb = llvm.create_pass_builder(s["tm_fast"], pto)
    mpm = llvm.create_new_module_pass_manager()
    for add in FAST_PASSES:
        getattr(mpm, add)()
    mpm.run(mod, pb)


FAST_PASSES = ("add_sroa_pass", "add_simplify_cfg_pass", "add_instruction_combine_pass")


def compile_ir(text: str, level: int = 3, fast: bool = False) -> bytes:
    """An object file for the host from LLVM IR text (verified, optimized at `level`); fast:
    the fast tier's passes (optimize_fast) and code generator instead."""
    s = _init()
    with _lock:
        mod = llvm.parse_assembly(text)
        mod.triple = s["triple"]
        mod.data_layout = s["layout"]
        mod.verify()
        if fast:
            optimize_fast(mod)
            return s["tm_fast"].emit_object(mod)
        optimize(mod, level)
        return s["tm"].emit_object(mod)


def load_object(key: str, obj: bytes, symbols: list[str]) -> dict[str, int]:
    """Add an object file (once per process for each key) and return the addresses of `symbols`."""
    s = _init()
    with _lock:
        if key not in s["loaded"]:
            s["engine"].add_object_file(llvm.ObjectFileRef.from_data(obj))
            s["engine"].finalize_object()
            s["loaded"].add(key)
        return {name: s["engine"].get_function_address(name) for name in symbols}


def is_loaded(key: str) -> bool:
    return key in _init()["loaded"]


def add_symbol(name: str, address: int):
    """Make `name` resolve to `address` in objects added later."""
    _init()
    llvm.add_symbol(name, address)


def c_function(address: int, restype, *argtypes):
    """A ctypes callable for a compiled function (ctypes releases the GIL during the call)."""
    return ctypes.CFUNCTYPE(restype, *argtypes)(address)
