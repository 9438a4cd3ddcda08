"""The public API: Device -> Module -> Kernel -> dispatch, shaped like Vulkan compute."""
from __future__ import annotations

import functools
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import devices
from .errors import BindingError, ExecutionError, SpirvError
from .progress import Progress
from .runtime import cache
from .runtime.memory import AddressSpace, Buffer, byte_view, range_table
from .spirv.module import Module as SpirvModule
from .spirv.specialize import Specialization
from .spirv.types import describe

_SIG = "i8(i8, i8, i8[::1], i8[::1], i8[::1], i8[::1], i8[:, ::1], i8[::1], i8[::1])"


@dataclass
class DispatchReport:
    """What a dispatch cost: compile time (and whether the disk cache served it), run time."""
    compile_seconds: float
    cache_hit: bool
    run_seconds: float
    workgroups: int
    threads: int = 1
    extra: dict = field(default_factory=dict)
    profile: object = None        # a jitcoop.profile.ProfileReport for dispatch(..., profile=True)

    def __str__(self):
        src = "cache" if self.cache_hit else "compiled"
        return (f"{self.workgroups} workgroups in {self.run_seconds * 1e3:.2f} ms on {self.threads} "
                f"thread(s); kernel {src} in {self.compile_seconds * 1e3:.1f} ms")


class Device:
    """A simulated device: a profile (subgroup size, limits) and an address space for buffers."""

    def __init__(self, profile: str = "generic", subgroup_size: int | None = None):
        try:
            self.profile = devices.profile(profile, subgroup_size)
        except ValueError as e:
            raise BindingError(str(e)) from None
        self.subgroup_size = self.profile.subgroup_size
        self.memory = AddressSpace()

    def __repr__(self):
        return f"Device({self.profile.name!r}, subgroup_size={self.subgroup_size})"

    def load(self, source) -> "Module":
        """A module from a path, SPIR-V bytes, or a str of SPIR-V assembly."""
        if isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source)
            origin = "<bytes>"
        elif isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source
                                                 and " " not in source.strip()
                                                 and not source.lstrip().startswith(("Op", ";", "%"))):
            p = Path(source)
            if not p.exists():
                raise FileNotFoundError(f"no such SPIR-V file: {p}")
            data = p.read_bytes()
            origin = str(p)
        elif isinstance(source, str):
            from .spirv.asm import assemble
            data = assemble(source)
            origin = "<assembly>"
        else:
            raise TypeError(f"load() takes a path, bytes or assembly text, not {type(source).__name__}")
        return Module(self, SpirvModule(data), origin)

    def buffer(self, arr) -> Buffer:
        """Place a numpy array in this device's address space; `.address` is its device address."""
        b = Buffer(self, arr)
        self.memory.add(b)
        return b


class Module:
    """A loaded SPIR-V module. Every instruction it uses has been checked to be runnable."""

    def __init__(self, device: Device, spirv: SpirvModule, origin: str = ""):
        self.device = device
        self.spirv = spirv
        self.origin = origin
        self._check_instructions()

    def _check_instructions(self):
        from .codegen import rules as R
        from .runtime.capabilities import SUPPORTED_CAPABILITIES
        R.load_all()
        for c in self.spirv.capabilities:
            if c not in SUPPORTED_CAPABILITIES:
                raise SpirvError(f"capability {c} is not supported by jitcoop")
        for f in self.spirv.functions.values():
            for b in f.blocks:
                for ins in b.instrs + [b.term]:
                    if ins.opname not in ("OpFunctionCall", "OpVariable"):   # handled by inlining
                        R.check_supported(ins, self.spirv.ext_imports)

    @property
    def entry_points(self) -> list[str]:
        return [e.name for e in self.spirv.entry_points if e.model == 5]

    def kernel(self, entry: str | None = None, spec: dict | None = None, **options) -> "Kernel":
        """Specialize and compile an entry point (cached on disk). `spec` keys are SpecIds or the
        spec constants' names (local_size_x/y/z name those that size the workgroup)."""
        from .signature import spec_ids
        return Kernel(self, entry, spec_ids(self.spirv, spec or {}), options)

    def info(self) -> dict:
        from .info import module_info
        return module_info(self.spirv)

    def disassemble(self) -> str:
        from .spirv.disasm import disassemble
        return disassemble(self.spirv.data)


class Kernel:
    """One entry point, specialized and compiled for one device."""

    def __init__(self, module: Module, entry: str | None, spec: dict, options: dict):
        self.module = module
        self.device = module.device
        self.options = dict(options)
        self.spec = dict(spec)
        self._profiled = None
        t0 = time.perf_counter()
        if os.environ.get("JITCOOP_BACKEND") == "llvm":
            self._init_llvm(entry, t0)
            return
        from .codegen.emitter import KernelGen
        sp = Specialization(module.spirv, spec)
        gen = KernelGen(module.spirv, sp, entry, self.device.subgroup_size, self.options,
                       profile=self.device.profile)
        source, meta = gen.build()
        self.source = source
        self.meta = meta
        self.entry = meta.entry
        key = cache.key_of(module.spirv.data, meta.entry, sorted(spec.items()), self.device.profile.name,
                           self.device.subgroup_size, sorted(self.options.items()), _SIG)
        self._fn, self.cache_hit = cache.load_kernel(key, source, _SIG)
        self.compile_seconds = time.perf_counter() - t0
        self._reported_compile = False

    def _init_llvm(self, entry, t0):
        from .options import KernelOptions
        from .runtime.compile import compile_kernel
        opts = KernelOptions.of(self.options)
        c = compile_kernel(self.module.spirv, entry, self.spec, self.device.profile, self.device.subgroup_size, opts)
        self.source = c.ir
        self.meta = c.meta
        self.entry = c.meta.entry
        self.cache_hit = c.cache_hit
        self._consts = np.frombuffer(c.meta.consts, np.uint8) if c.meta.consts else np.zeros(64, np.uint8)
        fn = c.fn

        def call(s, e, grid_a, bind_a, push_arr, scratch, table, err, cancel):
            return fn(s, e, grid_a.ctypes.data, bind_a.ctypes.data, push_arr.ctypes.data, scratch.ctypes.data,
                      table.ctypes.data, table.shape[0], err.ctypes.data, cancel.ctypes.data)
        self._fn = call
        self.compile_seconds = time.perf_counter() - t0
        self._reported_compile = False

    @property
    def local_size(self):
        return self.meta.local_size

    # -- by name ----------------------------------------------------------------------------------
    @functools.cached_property
    def signature(self):
        """The kernel's bindings, push constant members and spec constants by name
        (jitcoop.signature.Signature; print it)."""
        from .signature import Signature
        return Signature(self)

    def __repr__(self):
        return f"<jitcoop.Kernel {self.signature.call_text()} on {self.device!r}>"

    def __call__(self, grid, bindings: dict | None = None, push=None, **kw) -> DispatchReport:
        """`k(grid, a=A, b=B, push={"n": 4})`: dispatch with bindings by name (see dispatch)."""
        return self.dispatch(grid, bindings, push, **kw)

    def view(self, name: str, data):
        """`data` (the array or Buffer bound as `name`, or bytes) seen with the shader's types:
        for `buffer B { bfloat16_t c[]; }` a bfloat16 array; a block of several members gives a
        dict of member views. Views share memory with contiguous arrays and Buffers."""
        return self.signature.view(name, data)

    # -- dispatch ---------------------------------------------------------------------------------
    def dispatch(self, grid, bindings: dict | None = None, push=None, *, threads: int | None = None,
                 timeout: float | None = None, profile: bool = False, **named) -> DispatchReport:
        """Run the grid. Bindings by number ({0: a, (1, 2): b}) or by name (str keys, or keyword
        arguments: `a=A`); push constants as bytes, an array, or a dict of member values.
        profile=True runs a variant of the kernel with counters (compiled once, on first use)
        and puts a jitcoop.profile.ProfileReport in the report's `profile`."""
        if named or (bindings and any(isinstance(k, str) for k in bindings)):
            bindings = self.signature.bind(bindings, named)
        if isinstance(push, dict):
            push = self.signature.pack_push(push)
        if profile and not self.options.get("profile"):
            if self._profiled is None:
                self._profiled = Kernel(self.module, self.entry, self.spec, {**self.options, "profile": True})
            return self._profiled.dispatch(grid, bindings, push, threads=threads, timeout=timeout)
        grid = _grid(grid)
        nwg = grid[0] * grid[1] * grid[2]
        meta = self.meta
        bindings = bindings or {}
        bind, keep, writebacks, snapshots = self._bind(bindings)
        push_arr = self._push(push)
        phys = []
        for b in self.device.memory.buffers():
            phys.append((b.address, b.nbytes))
            if meta.writes_physical:
                snapshots.append((b.bytes, b.bytes.copy()))
        nthreads = _threads(threads, nwg)
        scratch = []
        ranges = [(bind[2 * i], bind[2 * i + 1]) for i in range(len(bind) // 2)] + phys
        ranges.append((push_arr[0], push_arr[1]))
        work_size = getattr(meta, "work_size", 0)
        for _ in range(nthreads):
            sh = np.zeros(max(16, meta.shared_size), np.uint8)
            pv = np.zeros(max(16, meta.private_frame * int(np.prod(meta.local_size))), np.uint8)
            wk = np.zeros(max(64, work_size), np.uint8)
            consts = getattr(self, "_consts", wk)
            scratch.append((sh, pv, np.array([sh.ctypes.data, pv.ctypes.data, wk.ctypes.data, consts.ctypes.data],
                                             np.int64), wk))
            ranges += [(sh.ctypes.data, sh.nbytes), (pv.ctypes.data, pv.nbytes)]
        table = range_table(ranges)
        grid_a = np.array(grid, np.int64)
        bind_a = np.array(bind if bind else [0, 0], np.int64)
        cancel = np.zeros(1, np.int64)
        psize = meta.profile.size if meta.profile is not None else 0
        errs = [np.zeros(8 + psize, np.int64) for _ in range(nthreads)]
        t0 = time.perf_counter()
        self._run_threads(nwg, nthreads, grid_a, bind_a, push_arr, scratch, table, errs, cancel, timeout)
        run = time.perf_counter() - t0
        failed = [e for e in errs if e[0] > 0]
        if failed or cancel[0] in (1, 3):
            for view, snap in snapshots:
                view[:] = snap
            if failed:
                e = min(failed, key=lambda e: e[1])
                raise self._execution_error(e, grid)
            if cancel[0] == 3:
                raise KeyboardInterrupt("dispatch interrupted; the buffers were restored")
            raise ExecutionError(f"the dispatch ran longer than its timeout of {timeout} s and was "
                                 "cancelled; the buffers were restored")
        for dst, src in writebacks:
            dst[...] = src
        rep = DispatchReport(0.0 if self._reported_compile else self.compile_seconds,
                             self.cache_hit, run, nwg, nthreads)
        if self.options.get("profile"):
            from .profile import ProfileReport
            names = {fid: self.module.spirv.name_of(fid).split("(")[0] for fid in self.module.spirv.functions}
            rep.profile = ProfileReport(meta.profile, np.sum(errs, axis=0), names, run, nwg)
        self._reported_compile = True
        del keep
        return rep

    def _run_threads(self, nwg, nthreads, grid_a, bind_a, push_arr, scratch, table, errs, cancel,
                     timeout):
        """Run the workgroups on worker threads (numba code releases the GIL). The calling thread
        only waits, so a timeout or Ctrl-C can set the cancel flag the kernels poll at every loop
        back edge. cancel: 1 timeout, 2 a worker failed, 3 interrupted."""
        fn = self._fn
        chunk = max(1, nwg // (nthreads * 8))
        counter = [0]
        lock = threading.Lock()

        def work(t):
            while True:
                with lock:
                    s = counter[0]
                    counter[0] = s + chunk
                if s >= nwg or cancel[0]:
                    return
                if fn(s, min(nwg, s + chunk), grid_a, bind_a, push_arr, scratch[t][2], table,
                      errs[t], cancel):
                    if cancel[0] == 0:
                        cancel[0] = 2        # stop the other threads: the dispatch has failed
                    return
        ths = [threading.Thread(target=work, args=(t,), daemon=True) for t in range(nthreads)]
        for th in ths:
            th.start()
        deadline = None if timeout is None else time.perf_counter() + timeout
        bar = Progress(nwg, "dispatch", unit="workgroup")     # shown after 2 s, on a terminal
        try:
            for th in ths:
                while th.is_alive():
                    th.join(0.05)
                    bar.update(counter[0])
                    if deadline is not None and time.perf_counter() > deadline and cancel[0] == 0:
                        cancel[0] = 1
        except KeyboardInterrupt:
            cancel[0] = 3
            for th in ths:
                th.join()
        finally:
            bar.close()

    def _bind(self, bindings):
        meta = self.meta
        norm = {}
        for k, v in bindings.items():
            key = (0, k) if isinstance(k, int) else tuple(k)
            if len(key) != 2:
                raise BindingError(f"binding key {k!r}: use an int (set 0) or a (set, binding) tuple")
            norm[key] = v
        used = {(b.set, b.binding) for b in meta.bindings}
        for key in norm:
            if key not in used:
                raise BindingError(f"binding (set {key[0]}, binding {key[1]}) is not used by entry point "
                                   f"{self.entry!r}; it uses {sorted(used) or 'no bindings'}")
        bind = []
        keep, writebacks, snapshots = [], [], []
        views = {}
        for b in meta.bindings:
            key = (b.set, b.binding)
            if key not in norm:
                raise BindingError(f"binding (set {b.set}, binding {b.binding}) ({b.name}: "
                                   f"{describe(b.type)}) has no buffer")
            if key not in views:
                views[key] = self._prepare(norm[key], b, keep, writebacks, snapshots)
            view = views[key]
            if view.nbytes < b.min_size:
                raise BindingError(f"binding (set {b.set}, binding {b.binding}) ({b.name}) needs at least "
                                   f"{b.min_size} bytes; the buffer has {view.nbytes}")
            bind += [view.ctypes.data, view.nbytes]
        return bind, keep, writebacks, snapshots

    def _prepare(self, value, b, keep, writebacks, snapshots):
        if isinstance(value, Buffer):
            view = value.bytes
        else:
            arr = value
            if not isinstance(arr, np.ndarray):
                raise BindingError(f"binding (set {b.set}, binding {b.binding}): expected a numpy array or "
                                   f"Buffer, got {type(value).__name__}")
            if arr.flags.c_contiguous and (arr.flags.writeable or not b.writable):
                view = byte_view(arr)
            else:
                # Work on a contiguous copy and write it back after a successful run.
                view = byte_view(np.ascontiguousarray(arr).copy())
                if b.writable and arr.flags.writeable:
                    writebacks.append((arr, view.view(arr.dtype).reshape(arr.shape)))
        keep.append(view)
        if b.writable:
            snapshots.append((view, view.copy()))
        return view

    def _push(self, push):
        need = self.meta.push_size
        if push is None:
            if need:
                raise BindingError(f"the shader has {need} bytes of push constants; pass push=")
            data = np.zeros(16, np.uint8)
            self._push_keep = data
            return np.array([data.ctypes.data, 0], np.int64)
        data = np.frombuffer(bytes(push), np.uint8) if isinstance(push, (bytes, bytearray, memoryview)) \
            else np.ascontiguousarray(push).reshape(-1).view(np.uint8)
        if data.nbytes < need:
            raise BindingError(f"push constants are {data.nbytes} bytes; the shader's block needs {need}")
        data = data.copy()
        self._push_keep = data
        return np.array([data.ctypes.data, data.nbytes], np.int64)

    def _execution_error(self, e, grid) -> ExecutionError:
        site = self.meta.sites[int(e[0]) - 1]
        wg = int(e[1])
        wgid = (wg % grid[0], (wg // grid[0]) % grid[1], wg // (grid[0] * grid[1]))
        lane = int(e[2]) if e[2] >= 0 else None
        msg = site.message
        if isinstance(msg, dict):            # a site that fails in several ways: err[7] says which
            msg = msg.get(int(e[7]), "failed")
        if "{" in msg:
            msg = msg.format(d=int(e[3]), e=int(e[4]), f=int(e[5]), g=int(e[6]))
        ins = site.ins
        return ExecutionError(msg, offset=ins.offset, opname=ins.opname, result_id=ins.result,
                              workgroup=wgid, lane=lane)


def _grid(grid):
    if isinstance(grid, int):
        grid = (grid,)
    g = tuple(int(x) for x in grid)
    if not 1 <= len(g) <= 3:
        raise BindingError(f"grid must have 1 to 3 dimensions, got {grid!r}")
    g = g + (1,) * (3 - len(g))
    if any(x < 0 for x in g):
        raise BindingError(f"grid sizes must not be negative: {grid!r}")
    return g


def _threads(threads, nwg):
    n = threads if threads else (os.cpu_count() or 1)
    return max(1, min(n, nwg))
