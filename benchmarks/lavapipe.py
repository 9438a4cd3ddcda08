"""Mesa lavapipe as a peer: the same SPIR-V, dispatched through tools/vkrun on lavapipe (a CPU
Vulkan driver with KHR cooperative matrices), timed and read back.

Where it is found:
- JITCOOP_LAVAPIPE=DEST, the folder `../shared/tools/get-lavapipe DEST` filled (it holds `run`,
  which starts a program against lavapipe and its own Vulkan loader); default: get-lavapipe's
  default, ~/.cache/lavapipe26.
- JITCOOP_VKRUN=PATH, the vkrun binary; default build/vkrun/vkrun, which `find()` builds with
  tools/vkrun/build.sh when it is missing (a C compiler and Vulkan headers: VULKAN_INCLUDE, else
  `../shared/tools/get-vulkan-headers`' default folder, else the system's).
"""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DEST = Path.home() / ".cache" / "lavapipe26"
DEFAULT_VKRUN = ROOT / "build" / "vkrun" / "vkrun"
DEFAULT_HEADERS = Path.home() / ".cache" / "vulkan-headers" / "root" / "usr" / "include"

_OK = re.compile(r"^case (\S+): ok .*repeat (\d+) best ([0-9.]+) ms", re.M)


class Lavapipe:
    """Runs one dispatch of a SPIR-V module on lavapipe: `time(...)` returns the best of
    `repeat` dispatches in seconds (after one untimed first dispatch) and the result binding."""

    def __init__(self, run: Path, vkrun: Path):
        self.run_script, self.vkrun = run, vkrun

    def time(self, spv: Path, spec: dict, grid, bindings: dict, out: int, push: bytes,
             repeat: int = 5, timeout: float = 600):
        grid = tuple(grid) + (1,) * (3 - len(grid))
        with tempfile.TemporaryDirectory(prefix="jitcoop-lvp-") as tmp:
            tmp = Path(tmp)
            lines = ["case bench", f"spv {spv}", "groups %d %d %d" % grid, f"repeat {repeat}"]
            lines += [f"spec {k} {v}" for k, v in sorted(spec.items())]
            (tmp / "push.bin").write_bytes(push)
            lines.append("push push.bin")
            for b, arr in sorted(bindings.items()):
                if b == out:
                    lines.append(f"bind {b} {arr.nbytes} - out.bin")
                else:
                    (tmp / f"in{b}.bin").write_bytes(np.ascontiguousarray(arr).tobytes())
                    lines.append(f"bind {b} 0 in{b}.bin -")
            (tmp / "manifest.txt").write_text("\n".join(lines) + "\n")
            proc = subprocess.run([str(self.run_script), str(self.vkrun), "-t", str(timeout), "-o", str(tmp),
                                   str(tmp / "manifest.txt")], capture_output=True, text=True,
                                  timeout=timeout + 60)
            m = _OK.search(proc.stdout)
            if proc.returncode or not m:
                tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
                raise RuntimeError(f"vkrun on lavapipe failed (exit {proc.returncode}): " + " | ".join(tail))
            result = np.frombuffer((tmp / "out.bin").read_bytes(), bindings[out].dtype)
            return float(m.group(3)) / 1e3, result.reshape(bindings[out].shape).copy()


def _build_vkrun(dest: Path) -> str | None:
    """Builds vkrun into dest's folder; None when built, else why not."""
    env = dict(os.environ)
    if "VULKAN_INCLUDE" not in env and (DEFAULT_HEADERS / "vulkan" / "vulkan_core.h").exists():
        env["VULKAN_INCLUDE"] = str(DEFAULT_HEADERS)
    try:
        proc = subprocess.run(["sh", str(ROOT / "tools" / "vkrun" / "build.sh"), str(dest.parent)],
                              capture_output=True, text=True, env=env, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"building vkrun failed: {e}"
    if proc.returncode or not dest.exists():
        return "building vkrun (tools/vkrun/build.sh) failed: " + proc.stderr.strip()[-300:]
    return None


def find() -> Lavapipe | str:
    """The lavapipe peer, or a string saying why there is none (a reason to skip with)."""
    dest = Path(os.environ.get("JITCOOP_LAVAPIPE", DEFAULT_DEST))
    run = dest / "run"
    if not run.exists():
        return (f"no lavapipe at {dest} (install it with ../shared/tools/get-lavapipe [DEST]; "
                "JITCOOP_LAVAPIPE=DEST says where)")
    vkrun = Path(os.environ.get("JITCOOP_VKRUN", DEFAULT_VKRUN))
    if not vkrun.exists():
        if "JITCOOP_VKRUN" in os.environ:
            return f"JITCOOP_VKRUN={vkrun} does not exist"
        why = _build_vkrun(vkrun)
        if why:
            return why
    return Lavapipe(run, vkrun)
