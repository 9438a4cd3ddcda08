"""The `jitcoop` command: run, info, dis, example."""
from __future__ import annotations

import argparse
import json
import struct
import sys
from pathlib import Path

import numpy as np

from .errors import JitcoopError


def _grid(s: str) -> tuple:
    try:
        g = tuple(int(x) for x in s.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--grid takes 1 to 3 comma-separated integers, not {s!r}") from None
    if not 1 <= len(g) <= 3:
        raise argparse.ArgumentTypeError(f"--grid takes 1 to 3 integers, not {s!r}")
    return g + (1,) * (3 - len(g))


def _binding(s: str):
    key, sep, path = s.partition("=")
    if not sep or not path:
        raise argparse.ArgumentTypeError(f"--buffer takes B=FILE or SET.B=FILE, not {s!r}")
    try:
        if "." in key:
            st, b = key.split(".", 1)
            return (int(st), int(b)), Path(path)
        return (0, int(key)), Path(path)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--buffer key must be B or SET.B, not {key!r}") from None


def _spec(s: str):
    k, sep, v = s.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"--spec takes ID=VALUE, not {s!r}")
    low = v.strip().lower()
    if low in ("true", "false"):
        val = low == "true"
    else:
        try:
            val = int(v, 0)
        except ValueError:
            try:
                val = float(v)
            except ValueError:
                raise argparse.ArgumentTypeError(f"--spec value must be a number or true/false, not {v!r}") from None
    return int(k), val


_PUSH_FORMATS = {"f32": "<f", "f64": "<d", "u32": "<I", "i32": "<i", "u64": "<Q", "i64": "<q",
                 "u16": "<H", "i16": "<h", "u8": "<B", "i8": "<b", "f16": "<e"}


def _push_values(s: str) -> bytes:
    out = b""
    for item in s.split(","):
        t, sep, v = item.partition(":")
        if not sep or t not in _PUSH_FORMATS:
            raise argparse.ArgumentTypeError(f"--push-values items are TYPE:VALUE with TYPE in "
                                             f"{', '.join(_PUSH_FORMATS)}; got {item!r}")
        out += struct.pack(_PUSH_FORMATS[t], float(v) if t[0] == "f" else int(v, 0))
    return out


def _read_buffer(p: Path) -> np.ndarray:
    if not p.exists():
        raise FileNotFoundError(f"no such buffer file: {p}")
    if p.suffix == ".npy":
        return np.load(p)
    return np.fromfile(p, dtype=np.uint8)


def _write_buffer(arr: np.ndarray, p: Path):
    if p.suffix == ".npy":
        np.save(p, arr)
    else:
        arr.tofile(p)


def cmd_run(a) -> int:
    import jitcoop
    dev = jitcoop.Device("generic", subgroup_size=a.subgroup_size)
    mod = dev.load(a.shader)
    k = mod.kernel(a.entry, spec=dict(a.spec or []))
    arrays, files = {}, {}
    for key, path in a.buffer or []:
        arrays[key] = _read_buffer(path)
        files[key] = path
    push = None
    if a.push:
        push = Path(a.push).read_bytes()
    elif a.push_values:
        push = a.push_values
    run = k.dispatch(a.grid, arrays, push=push, threads=a.threads, timeout=a.timeout)
    out_dir = Path(a.out) if a.out else None
    if out_dir:
        out_dir.mkdir(parents=True, exist_ok=True)
    for key, arr in arrays.items():
        dst = out_dir / files[key].name if out_dir else files[key]
        _write_buffer(arr, dst)
    print(run)
    return 0


def cmd_info(a) -> int:
    import jitcoop
    from .info import format_info, module_info
    mod = jitcoop.Device().load(a.shader)
    d = module_info(mod.spirv)
    print(json.dumps(d, indent=2, default=str) if a.json else format_info(d))
    return 0


def cmd_dis(a) -> int:
    from .spirv.disasm import disassemble
    p = Path(a.shader)
    if not p.exists():
        raise FileNotFoundError(f"no such SPIR-V file: {p}")
    sys.stdout.write(disassemble(p.read_bytes(), names=not a.raw_ids))
    return 0


def cmd_example(a) -> int:
    from .examples import run_sgemm
    ok, report, err = run_sgemm(a.n)
    print(f"tiled SGEMM {a.n}x{a.n}x{a.n} on the CPU: {report}")
    print(f"max |C - numpy| = {err:.3g}: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="jitcoop", description="Run SPIR-V compute shaders on the CPU.")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a compute shader on buffers from files")
    r.add_argument("shader")
    r.add_argument("--grid", type=_grid, required=True, help="workgroups: X[,Y[,Z]]")
    r.add_argument("--buffer", type=_binding, action="append", metavar="[SET.]B=FILE",
                   help=".npy files keep their dtype; other files are raw bytes")
    r.add_argument("--spec", type=_spec, action="append", metavar="ID=VALUE")
    r.add_argument("--push", metavar="FILE", help="push constants as raw bytes")
    r.add_argument("--push-values", type=_push_values, metavar="T:V,...", help="e.g. f32:1.5,u32:7")
    r.add_argument("--entry", default=None)
    r.add_argument("--out", metavar="DIR", help="write buffers here instead of over their files")
    r.add_argument("--subgroup-size", type=int, default=None)
    r.add_argument("--threads", type=int, default=None)
    r.add_argument("--timeout", type=float, default=None, help="cancel after this many seconds")
    r.set_defaults(fn=cmd_run)
    i = sub.add_parser("info", help="entry points, bindings and layouts, spec constants")
    i.add_argument("shader")
    i.add_argument("--json", action="store_true")
    i.set_defaults(fn=cmd_info)
    d = sub.add_parser("dis", help="disassemble")
    d.add_argument("shader")
    d.add_argument("--raw-ids", action="store_true", help="numeric ids instead of OpName names")
    d.set_defaults(fn=cmd_dis)
    e = sub.add_parser("example", help="run the bundled tiled SGEMM and check it against numpy")
    e.add_argument("--n", type=int, default=256)
    e.set_defaults(fn=cmd_example)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args)
    except (JitcoopError, FileNotFoundError, ValueError) as e:
        print(f"jitcoop: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("jitcoop: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
