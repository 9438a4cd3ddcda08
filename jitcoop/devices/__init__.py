"""Device profiles: subgroup size, cooperative matrix property tables and lane layouts.

A profile answers what a real driver would: which cooperative matrix types and MulAdd shapes it
supports (VkCooperativeMatrixPropertiesKHR and the NV flexible-dimension table), at which scopes,
and how each matrix is spread over the invocations (its lane layout, `layouts.py`).

    generic    every size and type the spec allows; subgroup 32 unless told otherwise; striped layout
    nvidia     the H100: its measured property tables and lane layouts (../shared/oracle)
    lavapipe   Mesa lavapipe 26.1: subgroup 8, 8x8x8, its 8x8-tile layouts
    amd-rdna3  wave32/wave64 WMMA, 16x16x16, A and B replicated across 16-lane groups
    shuffled   the generic profile with a seeded random permutation per matrix type
    qualcomm   Adreno-like wave64/wave128 for SPV_QCOM_cooperative_matrix_conversion (not measured)
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from . import layouts


TYPE_NAMES = ("f16", "f32", "f64", "bf16", "e4m3", "e5m2", "s8", "s16", "s32", "s64",
              "u8", "u16", "u32", "u64")


def type_name(s) -> str:
    """The property-table name of a scalar component type (f16, bf16, s8, u32, ...)."""
    if s.kind == "float":
        return s.encoding or f"f{s.width}"
    return f"{'s' if s.signed else 'u'}{s.width}"


@dataclass(frozen=True)
class CoopMatProps:
    """One row of VkCooperativeMatrixPropertiesKHR, or of the flexible-dimension table (then
    M, N, K are granularities and `wg_invocations` the workgroup size it is valid for)."""
    M: int
    N: int
    K: int
    A: str
    B: str
    C: str
    R: str
    saturating: bool
    scope: int                  # 3 subgroup, 2 workgroup
    flexible: bool = False
    wg_invocations: int = 0

    def fits(self, use, t, rows, cols, scope, W) -> bool:
        if scope != self.scope or (scope == 2 and self.flexible and W != self.wg_invocations):
            return False
        dims = {0: (self.M, self.K, (self.A,)), 1: (self.K, self.N, (self.B,)),
                2: (self.M, self.N, (self.C, self.R))}[use]
        if t not in dims[2]:
            return False
        if self.flexible:
            return rows % dims[0] == 0 and cols % dims[1] == 0
        return (rows, cols) == dims[:2]

    def fits_muladd(self, M, N, K, A, B, C, R, sat, scope, W) -> bool:
        if (A, B, C, R, sat, scope) != (self.A, self.B, self.C, self.R, self.saturating, self.scope):
            return False
        if self.flexible:
            if scope == 2 and W != self.wg_invocations:
                return False
            return M % self.M == 0 and N % self.N == 0 and K % self.K == 0
        return (M, N, K) == (self.M, self.N, self.K)


@dataclass
class Profile:
    name: str
    subgroup_size: int
    subgroup_sizes: tuple
    description: str = ""
    max_workgroup_invocations: int = 1024
    # None: every type and shape the spec allows (generic, shuffled)
    coopmat: list | None = None
    flexible: list | None = None
    workgroup_scope_max: int = 1024        # 0: no workgroup-scope matrices
    flexible_max_dimension: int = 1 << 16
    layout_kind: str = "striped"
    seed: int = 0
    extra: dict = field(default_factory=dict)

    # -- cooperative matrices ---------------------------------------------------------------------
    def coopmat_problem(self, t, W) -> str | None:
        """Why this device cannot hold matrix type t in a workgroup of W invocations (None: it can)."""
        inv = self.subgroup_size if t.scope == 3 else W
        if t.scope == 2:
            if self.workgroup_scope_max == 0:
                return f"the {self.name} profile has no workgroup-scope cooperative matrices"
            if W > self.workgroup_scope_max:
                return (f"workgroup-scope matrices need at most {self.workgroup_scope_max} invocations "
                        f"on {self.name}; this workgroup has {W}")
        elif W % self.subgroup_size:
            return (f"subgroup-scope matrices need whole subgroups: a workgroup of {W} invocations is "
                    f"not a multiple of the subgroup size {self.subgroup_size}")
        if self.coopmat is None:
            return None
        tn = type_name(t.elem)
        rows = self.coopmat + (self.flexible or [])
        if any(p.fits(t.use, tn, t.rows, t.cols, t.scope, W) for p in rows):
            if max(t.rows, t.cols) > self.flexible_max_dimension:
                return f"dimensions above {self.flexible_max_dimension} are not supported on {self.name}"
            return None
        where = "subgroup" if t.scope == 3 else f"workgroup ({inv} invocations)"
        return (f"the {self.name} profile has no {t.rows} x {t.cols} {tn} "
                f"{('A', 'B', 'accumulator')[t.use]} matrix at {where} scope")

    def muladd_problem(self, M, N, K, A, B, C, R, sat, scope, W) -> str | None:
        if self.coopmat is None:
            return None
        rows = self.coopmat + (self.flexible or [])
        if any(p.fits_muladd(M, N, K, A, B, C, R, sat, scope, W) for p in rows):
            return None
        return (f"the {self.name} profile has no {M}x{N}x{K} MulAdd {A} x {B} + {C} -> {R}"
                f"{' (saturating)' if sat else ''} at {'subgroup' if scope == 3 else 'workgroup'} scope")

    def layout(self, t, W) -> layouts.Layout:
        """The lane layout of matrix type t (a jitcoop.spirv.types.CoopMat) in a workgroup of W."""
        from . import layouts as L       # numpy: only code generation asks for layouts
        inv = self.subgroup_size if t.scope == 3 else W
        r, c, u = t.rows, t.cols, t.use
        kind = self.layout_kind
        if kind == "nvidia":
            return L.nvidia(u, r, c, 8 if t.elem.width == 8 else 16, inv)
        if kind == "lavapipe":
            return L.lavapipe(u, r, c, inv)
        if kind == "rdna3":
            return L.rdna3(u, r, c, inv)
        if kind == "shuffled":
            return L.shuffled(r, c, inv, t.key(), self.seed)
        if kind == "qualcomm":
            return L.qualcomm(u, r, c, inv)
        return L.striped(r, c, inv)


def parse_props(text: str) -> tuple[list, list]:
    """The KHR and flexible-dimension tables of an oracle property file (props-*.txt)."""
    khr, flex, cur = [], [], None
    for line in text.splitlines():
        if line.startswith("VkCooperativeMatrixPropertiesKHR"):
            cur = khr
            continue
        if line.startswith("VkCooperativeMatrixFlexibleDimensionsPropertiesNV"):
            cur = flex
            continue
        if not line.startswith(" "):
            cur = None                  # another section
            continue
        if cur is None:
            continue
        f = line.split()
        if not f[0].isdigit():
            continue
        scope = 3 if f[8] == "subgroup" else 2
        cur.append(CoopMatProps(int(f[0]), int(f[1]), int(f[2]), f[3], f[4], f[5], f[6],
                                f[7] == "1", scope, cur is flex,
                                int(f[9]) if len(f) > 9 else 0))
    return khr, flex


@functools.lru_cache(maxsize=None)
def _data(name) -> str:
    """A property file shipped with the package (read once per process)."""
    return resources.files(__package__).joinpath("data", name).read_text()


def _sizes(name, s, default, sizes):
    s = default if s is None else int(s)
    if s not in sizes:
        raise ValueError(f"the {name} profile takes a subgroup size of "
                         f"{', '.join(map(str, sizes))}; got {s}")
    return s


def _generic(subgroup_size):
    sizes = (4, 8, 16, 32, 64, 128)
    return Profile("generic", _sizes("generic", subgroup_size, 32, sizes), sizes,
                   "every size and type, subgroup size 4 to 128 (default 32), striped lane layout")


def _shuffled(subgroup_size, seed=0):
    sizes = (4, 8, 16, 32, 64, 128)
    return Profile("shuffled", _sizes("shuffled", subgroup_size, 32, sizes), sizes,
                   "generic, with a seeded random lane layout per matrix type", layout_kind="shuffled",
                   seed=seed)


def _nvidia(subgroup_size):
    khr, flex = parse_props(_data("props-h100.txt"))
    return Profile("nvidia", _sizes("nvidia", subgroup_size, 32, (32,)), (32,),
                   "NVIDIA H100 (driver 580): measured property tables and lane layouts",
                   coopmat=khr, flexible=flex, workgroup_scope_max=256,
                   flexible_max_dimension=1024, layout_kind="nvidia")


def _lavapipe(subgroup_size):
    khr, flex = parse_props(_data("props-lavapipe-26.1.txt"))
    return Profile("lavapipe", _sizes("lavapipe", subgroup_size, 8, (8,)), (8,),
                   "Mesa lavapipe 26.1: subgroup 8, 8x8x8, 8x8-tile lane layouts",
                   coopmat=khr, flexible=flex, workgroup_scope_max=0, layout_kind="lavapipe")


def _rdna3(subgroup_size):
    s = _sizes("amd-rdna3", subgroup_size, 64, (32, 64))
    rows = [CoopMatProps(16, 16, 16, a, a, c, c, False, 3) for a, c in
            (("f16", "f16"), ("f16", "f32"), ("bf16", "bf16"), ("bf16", "f32"))]
    rows += [CoopMatProps(16, 16, 16, a, b, "s32", "s32", sat, 3) for a in ("s8", "u8")
             for b in ("s8", "u8") for sat in (False, True)]
    return Profile("amd-rdna3", s, (32, 64), "AMD RDNA3 WMMA (wave32/wave64): 16x16x16, A and B "
                   "replicated across 16-lane groups", coopmat=rows, flexible=[],
                   workgroup_scope_max=0, layout_kind="rdna3")


def _qualcomm(subgroup_size):
    """Not measured (no public property dump exists): the sizes and types the
    SPV_QCOM_cooperative_matrix_conversion rules allow, at the MulAdd shapes of the extension
    proposal's examples. K is one 256-bit row of A: 8 float32, 16 float16, 32 int8; M and N are
    16, 32, 64 (and 128 on wave128), at most the subgroup size."""
    s = _sizes("qualcomm", subgroup_size, 64, (64, 128))
    dims = [d for d in (16, 32, 64, 128) if d <= s]
    combos = [("f32", "f32", "f32", "f32", 8), ("f16", "f16", "f16", "f16", 16),
              ("f16", "f16", "f32", "f32", 16), ("u8", "u8", "u32", "u32", 32)]
    combos += [(a, b, "s32", "s32", 32) for a in ("s8", "u8") for b in ("s8", "u8")]
    rows = [CoopMatProps(m, n, k, a, b, c, r, False, 3) for a, b, c, r, k in combos
            for m in dims for n in dims]
    return Profile("qualcomm", s, (64, 128), "Qualcomm Adreno-like wave64/wave128 with "
                   "VK_QCOM_cooperative_matrix_conversion (not measured): M, N 16..subgroup size, "
                   "K one 256-bit row; row-per-invocation lane layout", coopmat=rows, flexible=[],
                   workgroup_scope_max=0, layout_kind="qualcomm")


PROFILES = {"generic": _generic, "nvidia": _nvidia, "lavapipe": _lavapipe, "amd-rdna3": _rdna3,
            "shuffled": _shuffled, "qualcomm": _qualcomm}


def profile(name: str, subgroup_size=None, **kw) -> Profile:
    try:
        make = PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown device profile {name!r}; known: {', '.join(sorted(PROFILES))}") from None
    return make(subgroup_size, **kw)
