"""The `jitcoop` command: run, info, dis, example.

    jitcoop run shader.spv --grid 8,8,1 --buffer 0=a.npy --buffer 0.2=c.npy --spec 0=128 --push p.bin
    jitcoop info shader.spv [--json]
    jitcoop dis shader.spv
    jitcoop example [--n 256]
    jitcoop icd [--path]          # the Vulkan driver's manifest (VK_DRIVER_FILES)

Errors a user can fix (jitcoop errors, missing or unreadable files, bad arguments) print one line,
``jitcoop: error: ...``, on stderr and exit with status 2.
"""
from __future__ import annotations

import argparse
import json
import os
import struct
import sys
from pathlib import Path

import numpy as np

from .options import NUMERICS, KernelOptions
from .errors import JitcoopError

SPIRV_MAGIC = 0x07230203


class CliError(Exception):
    """A problem with the command line's files or values (exit status 2)."""


# -- argument parsing -----------------------------------------------------------------------------

NUMERICS_CHOICES = tuple(NUMERICS)
NUMERICS_HELP = ("float MulAdd arithmetic: exact (default: float64 sums, one rounding), nvidia (the "
                 "H100's models), float32 (float32 fused multiply-adds in K order, as a BLAS)")

def _grid(s: str) -> tuple:
    parts = s.replace("x", ",").split(",")
    try:
        g = tuple(int(x) for x in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected 1 to 3 comma-separated integers, not {s!r}") from None
    if not 1 <= len(g) <= 3 or any(x < 0 for x in g):
        raise argparse.ArgumentTypeError(f"expected 1 to 3 non-negative integers, not {s!r}")
    return g + (1,) * (3 - len(g))


def _seconds(s: str) -> float:
    try:
        t = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, not {s!r}") from None
    if not 0 <= t < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0 (0: no limit), not {s!r}")
    return t


def _buffer(s: str):
    key, sep, path = s.partition("=")
    if not sep or not path or not key:
        raise argparse.ArgumentTypeError(f"expected B=FILE or SET.B=FILE, not {s!r}")
    try:
        if "." in key:
            st, b = key.split(".", 1)
            k = (int(st), int(b))
        else:
            k = (0, int(key))
    except ValueError:
        raise argparse.ArgumentTypeError(f"the binding must be B or SET.B (integers), not {key!r}") from None
    if min(k) < 0:
        raise argparse.ArgumentTypeError(f"set and binding must not be negative: {key!r}")
    return k, Path(path)


def parse_value(v: str):
    """A spec constant value: an integer (0x.. too), a float, or true/false."""
    low = v.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return int(low, 0)
    except ValueError:
        pass
    try:
        return float(low)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, a float or true/false, not {v!r}") from None


def _spec(s: str):
    k, sep, v = s.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected ID=VALUE, not {s!r}")
    try:
        sid = int(k, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"the spec id must be an integer, not {k!r}") from None
    return sid, parse_value(v)


PUSH_FORMATS = {"f16": "<e", "f32": "<f", "f64": "<d", "i8": "<b", "u8": "<B", "i16": "<h", "u16": "<H",
                "i32": "<i", "u32": "<I", "i64": "<q", "u64": "<Q", "bool": "<I"}


def push_values(s: str) -> bytes:
    """`f32:1.5,u32:7` -> the packed little-endian bytes (no padding is added: give what the
    block's offsets need)."""
    out = b""
    for item in s.split(","):
        t, sep, v = item.strip().partition(":")
        if not sep or t not in PUSH_FORMATS:
            raise argparse.ArgumentTypeError(f"items are TYPE:VALUE with TYPE one of "
                                             f"{', '.join(PUSH_FORMATS)}; got {item!r}")
        try:
            if t == "bool":
                x = v.strip().lower()
                if x not in ("true", "false", "0", "1"):
                    raise ValueError
                val = int(x in ("true", "1"))
            elif t[0] == "f":
                val = float(v)
            else:
                val = int(v, 0)
            out += struct.pack(PUSH_FORMATS[t], val)
        except (ValueError, struct.error, OverflowError):
            raise argparse.ArgumentTypeError(f"{v!r} is not a {t} value (in {item!r})") from None
    return out


# -- files ----------------------------------------------------------------------------------------
def read_module(path: str | Path):
    """A decoded SPIR-V module from a binary .spv, or from SPIR-V assembly text."""
    from .spirv.module import Module
    return Module(read_spirv(path))


def read_spirv(path: str | Path) -> bytes:
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"no such SPIR-V file: {p}")
    if p.is_dir():
        raise CliError(f"{p} is a folder, not a SPIR-V file")
    data = p.read_bytes()
    if len(data) >= 4 and int.from_bytes(data[:4], "little") in (SPIRV_MAGIC, 0x03022307):
        return data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise CliError(f"{p} is neither SPIR-V (no magic number) nor SPIR-V assembly text") from None
    if "Op" not in text:
        raise CliError(f"{p} is neither SPIR-V (no magic number) nor SPIR-V assembly text")
    from .spirv.asm import assemble
    return assemble(text)


def read_buffer(p: Path) -> np.ndarray:
    """.npy files keep their dtype and shape; any other file is raw bytes (a uint8 array)."""
    if not p.exists():
        raise FileNotFoundError(f"no such buffer file: {p}")
    if p.is_dir():
        raise CliError(f"buffer file {p} is a folder")
    if p.suffix.lower() == ".npy":
        try:
            arr = np.load(p, allow_pickle=False)
        except ValueError as e:
            raise CliError(f"{p} is not a readable .npy file ({e})") from None
        if not isinstance(arr, np.ndarray) or arr.dtype.hasobject:
            raise CliError(f"{p} does not hold a plain numeric array")
        return arr
    return np.fromfile(p, dtype=np.uint8)


def read_push(a):
    """Push constants from --push FILE (raw bytes, or a .npy) or --push-values (None: none)."""
    if a.push is None:
        return a.push_values
    pp = Path(a.push)
    if not pp.exists():
        raise FileNotFoundError(f"no such push constant file: {pp}")
    return read_buffer(pp).tobytes() if pp.suffix.lower() == ".npy" else pp.read_bytes()


def write_buffer(arr: np.ndarray, p: Path):
    if p.suffix.lower() == ".npy":
        np.save(p, arr)
    else:
        arr.tofile(p)


# -- commands -------------------------------------------------------------------------------------
def cmd_run(a) -> int:
    import jitcoop
    if a.push is not None and a.push_values is not None:
        raise CliError("give --push FILE or --push-values, not both")
    keys = {}
    for key, path in a.buffer or []:
        if key in keys:
            raise CliError(f"binding (set {key[0]}, binding {key[1]}) is given twice")
        keys[key] = path
    out_dir = Path(a.out) if a.out else None
    if out_dir is not None:
        seen = {}
        for key, path in keys.items():
            if path.name in seen:
                raise CliError(f"--out: buffers {seen[path.name]} and {path} have the same file name")
            seen[path.name] = path
    spec = {}
    for sid, val in a.spec or []:
        spec[sid] = val
    dev = jitcoop.Device(a.profile, subgroup_size=a.subgroup_size)
    spirv = read_module(a.shader)
    # Every file is read before the (possibly slow) compile, so a typo fails at once.
    arrays = {key: read_buffer(path) for key, path in keys.items()}
    push = read_push(a)
    if a.profiles:
        return _run_compare(a, spirv, arrays, push, spec)
    k = jitcoop.Module(dev, spirv, str(a.shader)).kernel(a.entry, spec=spec, numerics=a.numerics,
                                                        compile_timeout=a.compile_timeout,
                                                        tier=a.tier or KernelOptions.of({}).tier)
    report = k.dispatch(a.grid, arrays, push=push, threads=a.threads, timeout=a.timeout)
    writable = {(b.set, b.binding) for b in k.meta.bindings if b.writable}
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for key, arr in arrays.items():
        if out_dir is not None:
            dst = out_dir / keys[key].name
        elif key in writable:
            dst = keys[key]
        else:
            continue                 # a read-only binding: its file is unchanged
        write_buffer(arr, dst)
        written.append(str(dst))
    lx, ly, lz = k.local_size
    print(f"{Path(a.shader).name} {k.entry!r}: grid {tuple(a.grid)} x local size ({lx}, {ly}, {lz}), "
          f"subgroup size {dev.subgroup_size}")
    print(report)
    if written:
        print("wrote " + ", ".join(written))
    return 0


def _run_compare(a, spirv, arrays, push, spec) -> int:
    """`run --profiles a,b,...`: the same dispatch under each profile; show where results differ."""
    from .check import compare_profiles
    names = [x.strip() for x in a.profiles.split(",") if x.strip()]
    if len(names) < 2:
        raise CliError("--profiles needs at least two profile names, e.g. generic,nvidia,shuffled")
    out = compare_profiles(spirv.data, names, a.grid, arrays, push=push, spec=spec, entry=a.entry,
                           compile_timeout=a.compile_timeout)
    if not out["differences"]:
        print(f"same results under {', '.join(names)}: the shader does not depend on the lane layout")
        return 0
    for d in out["differences"]:
        s, b = d["binding"]
        print(f"binding (set {s}, binding {b}): {d['count']} elements differ between "
              f"{out['baseline']} and {d['profile']}")
        for i, x, y in d["first"]:
            print(f"    [{i}] {out['baseline']}: {x}   {d['profile']}: {y}")
    print("the results depend on the device's lane layout (OpCooperativeMatrixLengthKHR elements "
          "or per-lane views are not portable)")
    return 1


def cmd_profile(a) -> int:
    import jitcoop
    from .profile import format_compare
    if a.push is not None and a.push_values is not None:
        raise CliError("give --push FILE or --push-values, not both")
    if a.plot and not a.compare:
        raise CliError("--plot draws a comparison: give --compare B.spv too")
    spec = {sid: val for sid, val in a.spec or []}
    dev = jitcoop.Device(a.profile, subgroup_size=a.subgroup_size)
    shaders = [a.shader] + ([a.compare] if a.compare else [])
    modules = [read_module(s) for s in shaders]
    push = read_push(a)
    reports = []
    for shader, spirv in zip(shaders, modules):
        arrays = {key: read_buffer(path) for key, path in a.buffer or []}   # fresh copies per run
        k = jitcoop.Module(dev, spirv, str(shader)).kernel(a.entry, spec=spec, decode_vector=a.decode_vector,
                                                            numerics=a.numerics, compile_timeout=a.compile_timeout,
                                                            tier=a.tier)
        reports.append(k.dispatch(a.grid, arrays, push=push, threads=a.threads, profile=True).profile)
    if a.json:
        out = {str(s): r.to_dict() for s, r in zip(shaders, reports)}
        print(json.dumps(out, indent=2, default=str))
    elif len(reports) == 2:
        for s, r in zip(shaders, reports):
            print(f"== {s}")
            print(r)
            print()
        print(format_compare(reports[0], reports[1], str(shaders[0]), str(shaders[1])))
    else:
        print(reports[0])
    if a.plot:
        _save_comparison(reports, shaders, a.plot)
    return 0


def _save_comparison(reports, shaders, path):
    try:
        import matplotlib
    except ImportError:
        raise CliError("--plot needs matplotlib: pip install 'jitcoop[plot]'") from None
    matplotlib.use("Agg")                       # a file, never a window
    from .plot import profile_comparison
    fig = profile_comparison(reports[0], reports[1], str(shaders[0]), str(shaders[1]))
    fig.savefig(path, dpi=120)
    print(f"chart written to {path}", file=sys.stderr)


def cmd_info(a) -> int:
    from .info import format_info, module_info
    d = module_info(read_module(a.shader))
    if a.json:
        print(json.dumps(d, indent=2, default=str))
    else:
        print(format_info(d))
    return 0


def cmd_check(a) -> int:
    from . import devices
    from .check import check, format_rows
    from .spirv.module import Module as SpirvModule
    prof = devices.profile(a.device, a.subgroup_size)
    spec = {sid: val for sid, val in a.spec or []}
    rows = check(SpirvModule(read_spirv(a.shader)), prof, spec, a.entry)
    print(format_rows(rows, prof))
    return 0 if all(r.ok for r in rows) else 1


def cmd_devices(a) -> int:
    from . import devices
    for name in devices.PROFILES:
        p = devices.profile(name)
        n = "every size and type" if p.coopmat is None else f"{len(p.coopmat)} KHR + {len(p.flexible or [])} flexible entries"
        wg = "no" if p.workgroup_scope_max == 0 else f"up to {p.workgroup_scope_max} invocations"
        print(f"{name:<10} subgroup {p.subgroup_size} (sizes {', '.join(map(str, p.subgroup_sizes))}); "
              f"cooperative matrices: {n}; workgroup scope: {wg}")
        print(f"{'':<10} {p.description}")
    return 0


def cmd_dis(a) -> int:
    if a.generated:
        return _dis_generated(a)
    from .spirv.disasm import disassemble           # imported late: only this command needs it
    data = read_spirv(a.shader)
    text = disassemble(data, names=False) if a.raw_ids else disassemble(data)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def _dis_generated(a) -> int:
    """The LLVM IR jitcoop generates for an entry point (before LLVM optimizes it, or after:
    --optimized), for a device profile, spec constants and kernel options."""
    import jitcoop
    from .options import KernelOptions
    from .runtime import jit
    from .runtime.compile import generate_ir
    dev = jitcoop.Device(a.profile, subgroup_size=a.subgroup_size)
    mod = dev.load(a.shader)
    spec = {sid: val for sid, val in a.spec or []}
    opts = KernelOptions.of(dict(numerics=a.numerics))
    ir, _ = generate_ir(mod.spirv, a.entry, spec, dev.profile, dev.subgroup_size, opts)
    if a.optimized:
        import llvmlite.binding as llvm
        jit._init()
        m = llvm.parse_assembly(ir)
        jit.optimize(m, opts.opt_level)
        ir = str(m)
    sys.stdout.write(ir)
    return 0


def cmd_build_library(a) -> int:
    """Compile kernels (and the kernel-library variants they call) into the cache ahead of time."""
    import jitcoop
    from .runtime.cache import cache_dir
    paths = []
    for x in a.shaders or []:
        p = Path(x)
        paths += sorted(p.rglob("*.spv")) if p.is_dir() else [p]
    if not paths:
        from . import examples
        paths = [examples.path(n) for n in examples.names()]
    done = failed = 0
    for path in paths:
        for prof in a.profiles.split(","):
            for numerics in a.numerics.split(","):
                try:
                    dev = jitcoop.Device(prof.strip())
                    mod = dev.load(path)
                    for entry in mod.entry_points:
                        mod.kernel(entry, numerics=numerics.strip())
                        done += 1
                except JitcoopError as e:
                    failed += 1
                    if not a.quiet:
                        print(f"{path} ({prof}, {numerics}): skipped: {_one_line(e)}", file=sys.stderr)
    print(f"{done} kernels compiled or found in {cache_dir()} ({failed} shader/profile pairs skipped)")
    return 0


def _bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def cmd_cache(a) -> int:
    """Show, prune or clear the disk cache (runtime/cache.py)."""
    from .runtime import cache
    d = cache.cache_dir()
    if a.action == "clear":
        n, freed = cache.clear(d)
        print(f"removed {n} file{'s' if n != 1 else ''} ({_bytes(freed)}) from {d}")
        return 0
    if a.action == "prune":
        try:
            limit = cache.parse_size(a.size) if a.size else cache.size_limit()
        except ValueError as e:
            raise CliError(f"--size: {e}") from None
        n, freed = cache.prune(d, limit)
        left = sum(f.size for f in cache.scan(d) if f.kind != "tmp")
        print(f"removed {n} file{'s' if n != 1 else ''} ({_bytes(freed)}) from {d}, least recently used first; "
              f"{_bytes(left)} left (limit {_bytes(limit)})")
        return 0
    files = cache.scan(d)
    limit = cache.size_limit()
    print(f"jitcoop cache {d}")
    print(f"  size limit   {_bytes(limit) if limit else 'none'} (JITCOOP_CACHE_MAX; default {cache.DEFAULT_MAX})")
    kinds = (("kernel", "kernels"), ("library", "library variants"), ("driver", "dispatch drivers"),
             ("old", "files of an earlier format (prune removes them)"), ("tmp", "temporary files"))
    for kind, what in kinds:
        fs = [f for f in files if f.kind == kind]
        if fs or kind in ("kernel", "library"):
            print(f"  {len(fs):>6}  {_bytes(sum(f.size for f in fs)):>10}  {what}")
    entries = [f for f in files if f.kind in ("kernel", "library", "driver")]
    print(f"  {len(entries):>6}  {_bytes(sum(f.size for f in entries)):>10}  entries in all")
    st = cache.read_stats(d)
    looks = st["hits"] + st["misses"]
    if looks:
        print(f"  hit rate     {100 * st['hits'] / looks:.1f}% ({st['hits']} hits, {st['misses']} misses, "
              f"{st['damaged']} unusable entries compiled again; {st['processes']} processes since the last clear)")
    else:
        print("  hit rate     no lookups recorded since the last clear")
    return 0


def cmd_example(a) -> int:
    from .examples import run_sgemm
    ok, report, err = run_sgemm(a.n, a.seed, threads=a.threads)
    m, n, k = report.extra["shape"]
    print(f"tiled SGEMM (16x16 workgroups, shared-memory tiles) {m}x{k} @ {k}x{n} on the CPU")
    print(f"  jitcoop: {report}  ({report.extra['gflops']:.2f} GFLOP/s)")
    print(f"  numpy:   {report.extra['numpy_seconds'] * 1e3:.2f} ms")
    print(f"  max |C - numpy| = {err:.3g}: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


def cmd_icd(a) -> int:
    from . import icd
    if a.include:
        print(icd.INCLUDE)
        return 0
    try:
        path = icd.manifest_path()
    except icd.NotBuilt as e:
        raise CliError(str(e)) from None
    print(path)
    if not a.path:
        print(f"\nRun a Vulkan application on jitcoop:\n    VK_DRIVER_FILES={path} ./app\n"
              "Physical devices, one per device profile (default nvidia; see `jitcoop devices`):\n"
              "    JITCOOP_ICD_PROFILES=nvidia,generic:16\n"
              "Other settings: JITCOOP_ICD_NUMERICS, JITCOOP_ICD_THREADS, JITCOOP_ICD_TIMEOUT, "
              "JITCOOP_ICD_COMPILE, JITCOOP_ICD_STRICT, JITCOOP_ICD_HIDE (docs/guide/vulkan-driver.md, "
              "docs/guide/diagnostics.md); JITCOOP_ICD_COMPILE_TIMEOUT, JITCOOP_ICD_HEAP, and for tests "
              "JITCOOP_ICD_FAULTS (docs/guide/faults.md).")
    return 0


def _dispatch_args(r):
    """The arguments of a dispatch, shared by `run` and `profile`."""
    r.add_argument("shader", help=".spv file (or SPIR-V assembly text)")
    r.add_argument("--grid", type=_grid, required=True, metavar="X[,Y[,Z]]", help="workgroup counts")
    r.add_argument("--buffer", type=_buffer, action="append", metavar="[SET.]B=FILE",
                   help="bind FILE at (SET, B), set 0 if not given; .npy files keep dtype and shape, "
                        "any other file is raw bytes")
    r.add_argument("--spec", type=_spec, action="append", metavar="ID=VALUE",
                   help="specialization constant: integer, float or true/false")
    r.add_argument("--push", metavar="FILE", help="push constants: a file of raw bytes (or a .npy)")
    r.add_argument("--push-values", type=push_values, metavar="T:V,...",
                   help="push constants packed from typed values, e.g. f32:1.5,u32:7 "
                        f"(types: {', '.join(PUSH_FORMATS)})")
    r.add_argument("--entry", default=None, help="entry point name (default: the first GLCompute one)")
    r.add_argument("--compile-timeout", type=_seconds, default=KernelOptions.compile_timeout, metavar="SECONDS",
                   help="stop a compile that takes longer with an error (default: "
                        f"{KernelOptions.compile_timeout:g}; 0: no limit)")


def _tier_arg(p, default: str, why: str):
    from .options import TIERS
    p.add_argument("--tier", default=default, choices=TIERS,
                   help=f"compile tier (kernel option tier; default: {default or ''}{': ' if default else ''}{why})")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="jitcoop", description="Run SPIR-V compute shaders on the CPU.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    r = sub.add_parser("run", help="run a compute shader on buffers read from files",
                       description="Run a compute shader on buffers read from files. Buffers the "
                                   "shader may write are written back to their files (same format), "
                                   "or, with --out, every buffer is written into that folder.")
    _dispatch_args(r)
    _tier_arg(r, None, "JITCOOP_TIER, else auto: a single dispatch runs the fast tier's code unless "
                       "the disk cache has the optimized code")
    r.add_argument("--out", metavar="DIR", help="write the buffers into DIR instead of over their files")
    r.add_argument("--profile", default="generic", help="device profile (default: generic)")
    r.add_argument("--profiles", metavar="A,B,...", help="run under each of these profiles (own copies "
                   "of the buffers) and show where the results differ; nothing is written")
    r.add_argument("--subgroup-size", type=int, default=None, metavar="N")
    r.add_argument("--numerics", default="exact", choices=NUMERICS_CHOICES, help=NUMERICS_HELP)
    r.add_argument("--threads", type=int, default=None, metavar="N",
                   help="worker threads (default: one per CPU)")
    r.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="cancel the dispatch after this long (buffers are left as they were)")
    r.set_defaults(fn=cmd_run)
    i = sub.add_parser("info", help="entry points, bindings and their layouts, spec constants, "
                                    "cooperative types")
    i.add_argument("shader")
    i.add_argument("--json", action="store_true", help="print the information as JSON")
    i.set_defaults(fn=cmd_info)
    c = sub.add_parser("check", help="does a shader fit a device profile? (cooperative matrix "
                                     "types and MulAdd shapes against its property tables)")
    c.add_argument("shader")
    c.add_argument("--device", default="generic", help="device profile (see `jitcoop devices`)")
    c.add_argument("--subgroup-size", type=int, default=None, metavar="N")
    c.add_argument("--spec", type=_spec, action="append", metavar="ID=VALUE")
    c.add_argument("--entry", default=None)
    c.set_defaults(fn=cmd_check)
    pr = sub.add_parser("profile", help="run a shader with counters: time and calls per decode / "
                                        "per-element / combine function and per cooperative instruction",
                        description="Run a compute shader once with profiling counters and print, per "
                                    "callback function (DecodeFunc, DecodeVectorFunc, per-element Func, "
                                    "CombineFunc), its calls, elements, path, time and bytes read, and "
                                    "per collective instruction its runs, elements and time. Buffers "
                                    "are read from their files and nothing is written back.")
    _dispatch_args(pr)
    _tier_arg(pr, "optimized", "the code a long-running application ends up running")
    pr.add_argument("--compare", metavar="B.spv", help="profile a second shader (a decode variant) on "
                                                      "the same buffers and show both side by side")
    pr.add_argument("--device", "--profile", dest="profile", default="generic",
                    help="device profile (default: generic)")
    pr.add_argument("--subgroup-size", type=int, default=None, metavar="N")
    pr.add_argument("--numerics", default="exact", choices=NUMERICS_CHOICES, help=NUMERICS_HELP)
    pr.add_argument("--decode-vector", default="auto", choices=("auto", "scalar", "vector", "check"),
                    help="which decode path tensor loads take (default: auto)")
    pr.add_argument("--threads", type=int, default=None, metavar="N")
    pr.add_argument("--json", action="store_true", help="print the report as JSON")
    pr.add_argument("--plot", metavar="OUT.png", help="with --compare: draw both profiles as bar charts "
                                                      "into this image (needs jitcoop[plot])")
    pr.set_defaults(fn=cmd_profile)
    dv = sub.add_parser("devices", help="list the device profiles")
    dv.set_defaults(fn=cmd_devices)
    d = sub.add_parser("dis", help="disassemble to SPIR-V assembly text, or print the generated LLVM IR")
    d.add_argument("shader")
    d.add_argument("--raw-ids", action="store_true", help="numeric ids instead of OpName names")
    d.add_argument("--generated", action="store_true",
                   help="print the LLVM IR jitcoop generates for the entry point instead")
    d.add_argument("--optimized", action="store_true", help="with --generated: after LLVM's optimizations")
    d.add_argument("--entry", default=None, help="with --generated: the entry point")
    d.add_argument("--profile", default="generic", help="with --generated: device profile")
    d.add_argument("--subgroup-size", type=int, default=None, metavar="N")
    d.add_argument("--spec", type=_spec, action="append", metavar="ID=VALUE")
    d.add_argument("--numerics", default="exact", choices=NUMERICS_CHOICES, help=NUMERICS_HELP)
    d.set_defaults(fn=cmd_dis)
    bl = sub.add_parser("build-library", help="compile kernels and the kernel library into the cache ahead "
                                              "of time (for CI images)",
                        description="Compile every entry point of the given shaders (.spv files, or "
                                    "folders searched for them) on the given profiles into the jitcoop "
                                    "cache (JITCOOP_CACHE_DIR), with the kernel-library functions they "
                                    "call. Without shaders: the bundled example. A CI image that runs "
                                    "this on its shaders and keeps the cache starts every test with "
                                    "kernels that load in milliseconds.")
    bl.add_argument("shaders", nargs="*", help=".spv files or folders")
    bl.add_argument("--profiles", default="generic,nvidia", help="device profiles (default: generic,nvidia)")
    bl.add_argument("--numerics", default="exact", help="comma-separated numerics (default: exact)")
    bl.add_argument("--quiet", action="store_true", help="do not list the shaders skipped")
    bl.set_defaults(fn=cmd_build_library)
    ca = sub.add_parser("cache", help="show the disk cache (size, entries, hit rate), prune it or clear it",
                        description="The disk cache of compiled kernels (JITCOOP_CACHE_DIR, default "
                                    "~/.cache/jitcoop). info: its size, entries and hit rate; prune: "
                                    "remove the least recently used entries down to a size (default: "
                                    "JITCOOP_CACHE_MAX, 1G unless set), and files of earlier formats; "
                                    "clear: remove every entry.")
    ca.add_argument("action", nargs="?", default="info", choices=("info", "prune", "clear"))
    ca.add_argument("--size", metavar="SIZE", help="prune: the size to keep (500M, 2G...)")
    ca.set_defaults(fn=cmd_cache)
    e = sub.add_parser("example", help="run the bundled tiled SGEMM and check it against numpy")
    e.add_argument("--n", type=int, default=256, help="matrix size (any positive size; default 256)")
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--threads", type=int, default=None, metavar="N")
    e.set_defaults(fn=cmd_example)
    vk = sub.add_parser("icd", help="the Vulkan driver's manifest: run Vulkan applications on jitcoop",
                        description="Print the path of the JSON manifest of jitcoop's Vulkan driver and "
                                    "how to run a Vulkan application on it.")
    vk.add_argument("--path", action="store_true", help="print the manifest's path only "
                                                        "(VK_DRIVER_FILES=$(jitcoop icd --path) ./app)")
    vk.add_argument("--include", action="store_true", help="print the folder of the Vulkan headers "
                                                           "the driver was built with")
    vk.set_defaults(fn=cmd_icd)
    return p


def _one_line(e: BaseException) -> str:
    msg = str(e) or type(e).__name__
    if isinstance(e, OSError) and e.filename and str(e.filename) not in msg:
        msg = f"{msg}: {e.filename}"
    return " ".join(msg.split())


def main(argv=None) -> int:
    """Run the command line; returns the exit status (argparse errors included, as 2)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:          # --help (0) or a usage error (2), already printed
        return e.code if isinstance(e.code, int) else 2
    try:
        return args.fn(args)
    except BrokenPipeError:          # `jitcoop dis x.spv | head`: stop quietly
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0
    except (JitcoopError, OSError, CliError) as e:
        print(f"jitcoop: error: {_one_line(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("jitcoop: interrupted", file=sys.stderr)
        return 130
    except Exception as e:           # a bug in jitcoop: one line, the traceback on request
        if os.environ.get("JITCOOP_TRACEBACK"):
            raise
        print(f"jitcoop: internal error: {type(e).__name__}: {_one_line(e)} "
              "(set JITCOOP_TRACEBACK=1 for the traceback)", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
