"""The public API: Device -> Module -> Kernel -> dispatch, shaped like Vulkan compute."""
from __future__ import annotations

import functools
import math
import numbers
import operator
import os
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import devices
from .errors import BindingError, ExecutionError, SpirvError
from .runtime.memory import AddressSpace, Buffer, byte_view
from .runtime.snapshot import Snapshot
from .spirv.module import Module as SpirvModule
from .spirv.types import describe


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
    tier: str = "optimized"       # the compile tier of the code that ran: "fast" or "optimized"

    def __str__(self):
        src = "cache" if self.cache_hit else "compiled"
        return (f"{self.workgroups} workgroups in {self.run_seconds * 1e3:.2f} ms on {self.threads} "
                f"thread(s), {self.tier} tier; kernel {src} in {self.compile_seconds * 1e3:.1f} ms")


class Device:
    """A simulated device: a profile (subgroup size, limits) and an address space for buffers.

    strict=True makes every kernel of the device strict (the kernel option `strict`: the rules
    that hardware does not enforce, jitcoop.diagnostics, raise instead of warning)."""

    def __init__(self, profile: str = "generic", subgroup_size: int | None = None, strict: bool = False):
        try:
            self.profile = devices.profile(profile, subgroup_size)
        except ValueError as e:
            raise BindingError(str(e)) from None
        if not isinstance(strict, bool):
            raise BindingError(f"strict={strict!r}: give True or False")
        self.subgroup_size = self.profile.subgroup_size
        self.strict = strict
        self.memory = AddressSpace()

    def __repr__(self):
        return f"Device({self.profile.name!r}, subgroup_size={self.subgroup_size}" + \
            (", strict=True)" if self.strict else ")")

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
        if np.asarray(arr).dtype.hasobject:
            raise BindingError("an array of Python objects has no bytes a shader can use")
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
        from .codegen.rules import supported
        from .runtime.capabilities import SUPPORTED_CAPABILITIES
        for c in self.spirv.capabilities:
            if c not in SUPPORTED_CAPABILITIES:
                raise SpirvError(f"capability {c} is not supported by jitcoop")
        for f in self.spirv.functions.values():
            for b in f.blocks:
                for ins in b.instrs + [b.term]:
                    if ins.opname not in ("OpFunctionCall", "OpVariable"):   # handled by inlining
                        R.check_supported(ins, self.spirv.ext_imports, (supported.OPS, supported.EXT))

    @property
    def entry_points(self) -> list[str]:
        """The names of the module's GLCompute entry points."""
        return [e.name for e in self.spirv.entry_points if e.model == 5]

    def kernel(self, entry: str | None = None, spec: dict | None = None, **options) -> "Kernel":
        """Specialize and compile an entry point (cached on disk). `spec` keys are SpecIds or the
        spec constants' names (local_size_x/y/z name those that size the workgroup)."""
        from .signature import spec_ids
        if entry is not None and not isinstance(entry, str):
            raise BindingError(f"the entry point is named by a str, not {type(entry).__name__}")
        if spec is not None and not isinstance(spec, dict):
            raise BindingError(f"spec constants are a dict {{SpecId or name: value}}, not {type(spec).__name__}")
        if self.device.strict:
            options.setdefault("strict", True)
        return Kernel(self, entry, spec_ids(self.spirv, spec or {}), options)

    def info(self) -> dict:
        """What `jitcoop info` prints, as a dict: entry points, bindings and layouts, push and spec
        constants, cooperative types."""
        from .info import module_info
        return module_info(self.spirv)

    def disassemble(self) -> str:
        """The module as SPIR-V assembly text (spirv-dis style)."""
        from .spirv.disasm import disassemble
        return disassemble(self.spirv.data)


class Kernel:
    """One entry point, specialized and compiled for one device."""

    def __init__(self, module: Module, entry: str | None, spec: dict, options):
        from .options import KernelOptions
        self.module = module
        self.device = module.device
        self.options = KernelOptions.of(options)
        self.spec = dict(spec)
        self.entry = entry
        self._profiled = None
        self._binding_plan = None
        self._dispatches = 0
        self._promotion = None          # None, "queued" or "failed" (jitcoop.runtime.tiers)
        self._in_flight: set = set()    # first dispatches at the fast tier running now (dispatch.Running)
        t0 = time.perf_counter()
        if self.options.tier == "auto":
            compiled = self._compile_tier("optimized", cached_only=True) or self._compile_tier("fast")
        else:
            compiled = self._compile_tier(self.options.tier)
        self._code = (compiled, np.frombuffer(compiled.meta.consts or bytes(64), np.uint8))
        self.entry = compiled.meta.entry
        self.cache_hit = compiled.cache_hit
        self._diagnosed: set = set()      # (instruction offset, rule) reported (jitcoop.diagnostics)
        self.compile_seconds = time.perf_counter() - t0
        self._reported_compile = False

    def _compile_tier(self, tier: str, cached_only: bool = False, background: bool = False):
        from .runtime.compile import compile_kernel
        return compile_kernel(self.module.spirv, self.entry, self.spec, self.device.profile,
                              self.device.subgroup_size, self.options.replace(tier=tier),
                              cached_only=cached_only, background=background)

    @property
    def _compiled(self):
        return self._code[0]

    @property
    def meta(self):
        """The metadata of the code dispatches run now (jitcoop.codegen.meta.KernelMeta)."""
        return self._code[0].meta

    @property
    def tier(self) -> str:
        """The compile tier of the code dispatches run now: "fast" or "optimized"."""
        return self._code[0].tier

    def wait_optimized(self, timeout: float | None = None) -> bool:
        """Under tier="auto": queue the optimized compile now if it is not done or queued, and
        wait for it; True once dispatches run the optimized code (False: timeout passed, the
        compile failed, which leaves the fast code in place and logs why, or tier="fast")."""
        from .runtime import tiers
        if self.options.tier == "fast":
            return False
        if self.tier != "optimized" and self._promotion is None:
            self._promotion = "queued"
            tiers.promote(self)
        if self.tier != "optimized" and self._promotion == "queued":
            tiers.wait(timeout)
        return self.tier == "optimized"

    def _promoted(self, compiled):
        """The optimized code, ready (jitcoop.runtime.tiers' thread): one assignment swaps the
        code and its metadata together. A first dispatch still running on the fast code, with at
        most half of its workgroups taken, stops and runs again on the optimized code (from the
        buffers as they were: both tiers write the same bytes, and the rest of a long dispatch
        runs several times faster than at the fast tier)."""
        self._code = (compiled, np.frombuffer(compiled.meta.consts or bytes(64), np.uint8))
        for handle in list(self._in_flight):
            handle.supersede()

    def _promotion_failed(self, error):
        self._promotion = "failed"
        self.promotion_error = error

    def describe(self) -> str:
        """Words for the kernel in messages: its entry point and module."""
        return f"entry point {self.entry!r} of {self.module.origin or 'a module'}"

    @property
    def source(self) -> str:
        """The LLVM IR of the code dispatches run now (generated again when the kernel came from
        the disk cache)."""
        c = self._compiled
        if c.ir is None:
            from .runtime.compile import generate_ir
            c.ir = generate_ir(self.module.spirv, self.entry, self.spec, self.device.profile,
                               self.device.subgroup_size, self.options.replace(tier=c.tier))[0]
        return c.ir

    @property
    def local_size(self):
        """The workgroup size (x, y, z), after specialization."""
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
                 timeout: float | None = None, profile: bool = False, on_diagnostic=None,
                 **named) -> DispatchReport:
        """Run the grid. Bindings by number ({0: a, (1, 2): b}) or by name (str keys, or keyword
        arguments: `a=A`); push constants as bytes, an array, or a dict of member values.
        profile=True runs a variant of the kernel with counters (compiled once, on first use)
        and puts a jitcoop.profile.ProfileReport in the report's `profile`. A portability
        diagnostic (jitcoop.diagnostics) is a PortabilityWarning, or a call of
        `on_diagnostic(warning)` where that is given (the Vulkan driver's debug-utils messages)."""
        if named or (bindings and any(isinstance(k, str) for k in bindings)):
            bindings = self.signature.bind(bindings, named)
        if isinstance(push, dict):
            push = self.signature.pack_push(push)
        if profile and not self.options.profile:
            if self._profiled is None:
                self._profiled = Kernel(self.module, self.entry, self.spec, self.options.replace(profile=True))
            return self._profiled.dispatch(grid, bindings, push, threads=threads, timeout=timeout,
                                           on_diagnostic=on_diagnostic)
        from .runtime import dispatch as run
        grid = _grid(grid)
        _check_run_options(threads, timeout)
        nwg = grid[0] * grid[1] * grid[2]
        compiled, consts = self._code       # (one tier's code and metadata, whatever swaps meanwhile)
        meta = compiled.meta
        self._dispatches += 1
        if self._dispatches > 1:
            self._maybe_promote(0.0)
        bind, keep, writebacks, written = self._bind(bindings or {})
        push_data = self._push(push)
        keep.append(push_data)
        phys = []
        for b in self.device.memory.buffers():
            phys.append((b.address, b.nbytes))
            if meta.writes_physical:
                written.append(b.bytes)
        long_run = handle = None
        if self._promotion is None and self.options.tier == "auto" and compiled.tier == "fast":
            # a first dispatch still running after LONG_RUN seconds queues the optimized compile
            # then; should the code be ready while the dispatch has done at most half of its
            # workgroups, the dispatch starts again on it (_promoted)
            long_run = threading.Timer(_tiers().LONG_RUN, self._maybe_promote, (_tiers().LONG_RUN,))
            long_run.daemon = True
            handle = run.Running()
            self._in_flight.add(handle)
            long_run.start()
        t0, spent = time.perf_counter(), 0.0
        while True:
            snapshot = Snapshot(written)        # taken by the dispatch's threads before they run
            left = None if timeout is None else max(0.0, timeout - (time.perf_counter() - t0))
            try:
                out = run.run(compiled.address, meta, consts, grid, bind,
                              (push_data.ctypes.data, push_data.nbytes if push is not None else 0), phys,
                              _threads(threads, nwg), left, snapshot, handle)
            except BaseException:       # (raised by a signal handler of the program's own: no kernel runs on)
                snapshot.restore()
                self._in_flight.discard(handle)
                raise
            finally:
                if long_run is not None:
                    long_run.cancel()
            if out.cancel != run.SUPERSEDED:
                break
            # the optimized code overtook this dispatch: the buffers as they were, and again on it
            snapshot.restore()
            self._in_flight.discard(handle)
            handle, spent = None, spent + out.seconds
            compiled, consts = self._code
            meta = compiled.meta
        self._in_flight.discard(handle)
        out.seconds += spent
        failed = [e for e in out.errs if e[0] > 0]
        if failed or out.cancel in (run.TIMEOUT, run.INTERRUPTED):
            snapshot.restore()
            if failed:
                e = min(failed, key=lambda e: e[1])
                raise self._execution_error(meta, e, grid)
            if out.cancel == run.INTERRUPTED:
                raise KeyboardInterrupt("dispatch interrupted; the buffers were restored")
            raise ExecutionError(f"the dispatch ran longer than its timeout of {timeout} s and was "
                                 "cancelled; the buffers were restored")
        for dst, src in writebacks:
            dst[...] = src
        if meta.diagnostics:
            self._diagnose(meta, out.errs, grid, on_diagnostic)
        rep = DispatchReport(0.0 if self._reported_compile else self.compile_seconds,
                             self.cache_hit, out.seconds, nwg, out.threads, tier=compiled.tier)
        self._maybe_promote(out.seconds)    # (a run just past LONG_RUN: its timer may not have fired)
        if self.options.profile:
            from .profile import ProfileReport
            names = {fid: self.module.spirv.name_of(fid).split("(")[0] for fid in self.module.spirv.functions}
            rep.profile = ProfileReport(meta.profile, np.sum(out.errs, axis=0), names, out.seconds, nwg,
                                        (meta.lanes_run, int(np.prod(meta.local_size)), meta.varying,
                                         meta.lane_group, meta.lane_group_why), compiled.tier)
        self._reported_compile = True
        del keep
        return rep

    def _bind(self, bindings):
        plan = self._binding_plan
        if plan is None:
            # what every dispatch checks against, worked out once: (binding, key, written) in the
            # meta's order, and the keys used (several variables may share a binding: aliases; the
            # buffer is written if any of them writes)
            meta = self.meta
            writes = {(b.set, b.binding) for b in meta.bindings if b.writable}
            plan = self._binding_plan = ([(b, (b.set, b.binding), (b.set, b.binding) in writes)
                                          for b in meta.bindings],
                                         {(b.set, b.binding) for b in meta.bindings})
        order, used = plan
        if not isinstance(bindings, dict):
            raise BindingError(f"bindings are a dict {{binding: array}}, not {type(bindings).__name__}")
        norm = {}
        for k, v in bindings.items():
            key = (0, k) if isinstance(k, int) else tuple(k) if isinstance(k, tuple) else None
            if key is None or len(key) != 2 or not all(isinstance(x, int) for x in key):
                raise BindingError(f"binding key {k!r}: use an int (set 0) or a (set, binding) tuple")
            norm[key] = v
        for key in norm.keys() - used:
            raise BindingError(f"binding (set {key[0]}, binding {key[1]}) is not used by entry point "
                               f"{self.entry!r}; it uses {sorted(used) or 'no bindings'}")
        bind = []
        keep, writebacks, written = [], [], []
        views = {}
        for b, key, writable in order:
            got = views.get(key)
            if got is None:
                if key not in norm:
                    raise BindingError(f"binding (set {b.set}, binding {b.binding}) ({b.name}: "
                                       f"{describe(b.type)}) has no buffer")
                got = views[key] = self._prepare(norm[key], b, writable, keep, writebacks, written)
            view, address = got
            if view.nbytes < b.min_size:
                raise BindingError(f"binding (set {b.set}, binding {b.binding}) ({b.name}) needs at least "
                                   f"{b.min_size} bytes; the buffer has {view.nbytes}")
            bind += (address, view.nbytes)
        return bind, keep, writebacks, written

    def _prepare(self, value, b, writable, keep, writebacks, written):
        """(the uint8 view the kernel works on, its address)."""
        if isinstance(value, Buffer):
            view, address = value.bytes, value.address
        else:
            arr = value
            if not isinstance(arr, np.ndarray):
                raise BindingError(f"binding (set {b.set}, binding {b.binding}): expected a numpy array or "
                                   f"Buffer, got {type(value).__name__}")
            if arr.dtype.hasobject:
                raise BindingError(f"binding (set {b.set}, binding {b.binding}): an array of Python objects "
                                   "has no bytes a shader can use")
            address = arr.ctypes.data
            if arr.flags.c_contiguous and (arr.flags.writeable or not writable) and address % _ALIGNMENT == 0:
                view = byte_view(arr)
            else:
                # Work on a contiguous, aligned copy (a Vulkan buffer is aligned; atomics need it)
                # and write it back after a successful run.
                view = byte_view(np.ascontiguousarray(arr).copy())
                address = view.ctypes.data
                if writable and arr.flags.writeable:
                    writebacks.append((arr, view.view(arr.dtype).reshape(arr.shape)))
        keep.append(view)
        if writable:
            written.append(view)        # (copied before the dispatch runs: runtime.snapshot)
        return view, address

    def _push(self, push) -> np.ndarray:
        """The push constants as a private copy of bytes (the caller keeps it alive)."""
        need = self.meta.push_size
        if push is None:
            if need:
                raise BindingError(f"the shader has {need} bytes of push constants; pass push=")
            return np.zeros(16, np.uint8)
        if isinstance(push, (bytes, bytearray, memoryview)):
            data = np.frombuffer(bytes(push), np.uint8)     # (bytes are immutable: private as they are)
        elif isinstance(push, (np.ndarray, np.generic)):
            if np.asarray(push).dtype.hasobject:
                raise BindingError("push constants: an array of Python objects has no bytes a shader can use")
            data = np.ascontiguousarray(push).reshape(-1).view(np.uint8).copy()
        else:
            raise BindingError(f"push constants are bytes, a numpy array or a dict of member values, not "
                               f"{type(push).__name__}")
        if data.nbytes < need:
            raise BindingError(f"push constants are {data.nbytes} bytes; the shader's block needs {need}")
        return data

    def _maybe_promote(self, run_seconds: float):
        """Under tier="auto", fast-tier code dispatched again or running long: queue its
        optimized compile (jitcoop.runtime.tiers)."""
        if self._promotion is None and self.options.tier == "auto" and self._code[0].tier == "fast" \
                and (self._dispatches > 1 or run_seconds >= _tiers().LONG_RUN):
            self._promotion = "queued"
            # a dispatch running long now goes first: it may start again on the optimized code
            _tiers().promote(self, urgent=bool(self._in_flight))

    def _execution_error(self, meta, e, grid) -> ExecutionError:
        site, msg, where = self._site_record(meta, e, grid)
        return ExecutionError(msg, **where)

    @staticmethod
    def _site_record(meta, e, grid):
        """(the Site, its message, where: instruction, workgroup and lane) of a record in the
        failure record's layout: site number, workgroup, lane, details {d} {e} {f} {g}, case."""
        site = meta.sites[int(e[0]) - 1]
        wg = int(e[1])
        wgid = (wg % grid[0], (wg // grid[0]) % grid[1], wg // (grid[0] * grid[1]))
        lane = int(e[2]) if e[2] >= 0 else None
        msg = site.message
        if isinstance(msg, dict):            # a site that fails in several ways: e[7] says which
            msg = msg.get(int(e[7]), "failed")
        if "{" in msg:
            msg = msg.format(d=int(e[3]), e=int(e[4]), f=int(e[5]), g=int(e[6]))
        ins = site.ins
        return site, msg, dict(offset=ins.offset, opname=ins.opname, result_id=ins.result, workgroup=wgid,
                               lane=lane)

    def _diagnose(self, meta, errs, grid, sink=None):
        """A PortabilityWarning for each diagnostic site this dispatch reached, once per kernel,
        instruction and rule whichever tier's code ran (the lowest workgroup the threads
        recorded): warned, or given to sink."""
        from .diagnostics import PortabilityWarning, rule_of
        for number, base in meta.diagnostics:
            recs = [e[base:base + 8] for e in errs if e[base] != 0]
            if not recs:
                continue
            first = min(recs, key=lambda r: r[1])
            site, msg, where = self._site_record(meta, first, grid)
            rule = rule_of(site, int(first[7]))
            if (site.ins.offset, rule.name) in self._diagnosed:
                continue
            self._diagnosed.add((site.ins.offset, rule.name))
            w = PortabilityWarning(f"{msg} (not portable: {rule.spec}; strict=True makes it an error)",
                                   rule.name, **where)
            if sink is not None:
                sink(w)
            else:
                warnings.warn(w, stacklevel=3)


# Alignment of the arrays bound in place: others are copied (the address of a Vulkan buffer's
# binding is aligned to minStorageBufferOffsetAlignment; x86 atomics must not straddle a line).
_ALIGNMENT = 16
# maxComputeWorkGroupCount, as jitcoop's Vulkan driver reports it.
MAX_GRID = (0x7FFFFFFF, 65535, 65535)


def _tiers():
    from .runtime import tiers
    return tiers


def _grid(grid):
    if isinstance(grid, numbers.Integral):
        grid = (grid,)
    try:
        g = tuple(operator.index(x) for x in grid)
    except TypeError:
        raise BindingError(f"grid must be 1 to 3 integers (workgroup counts), got {grid!r}") from None
    if not 1 <= len(g) <= 3:
        raise BindingError(f"grid must have 1 to 3 dimensions, got {grid!r}")
    g = g + (1,) * (3 - len(g))
    if any(x < 0 for x in g):
        raise BindingError(f"grid sizes must not be negative: {grid!r}")
    for axis, x, most in zip("xyz", g, MAX_GRID):
        if x > most:
            raise BindingError(f"grid {g}: {axis} = {x} is more workgroups than a device dispatches "
                               f"(maxComputeWorkGroupCount is {MAX_GRID})")
    return g


def _check_run_options(threads, timeout):
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, numbers.Integral)
                                or threads < 0):
        raise BindingError(f"threads={threads!r}: give a number of worker threads (0 or None: one per core)")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, numbers.Real)
                                or math.isnan(timeout) or timeout <= 0):
        raise BindingError(f"timeout={timeout!r}: give a positive number of seconds (None: no limit)")


def _cores() -> int:
    """The cores this process may run on (a cpuset or `taskset` counts, as on CI runners that
    share a host), not the host's."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _threads(threads, nwg):
    n = threads if threads else _cores()
    return max(1, min(n, nwg))
