"""`jitcoop check`: does a shader fit a device profile?

Lists every cooperative matrix type and MulAdd combination the module uses (after
specialization) and whether the profile supports it, with the reason when it does not, the way a
Vulkan driver's property tables would decide.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import devices
from .devices import type_name
from .devices.coopvec import coopvec_supported, coopvec_uses
from .errors import SpirvError
from .spirv.module import Module
from .spirv.specialize import Specialization
from .spirv.types import describe


@dataclass
class CheckRow:
    kind: str              # "type", "muladd", "coopvec", "ext" or "qcom"
    what: str
    offset: int
    problem: str | None

    @property
    def ok(self):
        return self.problem is None


def check(m: Module, profile: devices.Profile, spec_values: dict | None = None, entry=None) -> list:
    spec = Specialization(m, spec_values or {})
    size = spec.local_size(m.entry_point(entry)) or (1, 1, 1)
    W = size[0] * size[1] * size[2]
    rows = []
    for ins in m.global_order:
        if ins.opname == "OpTypeCooperativeMatrixKHR":
            try:
                t = spec.type(ins.result)
            except SpirvError as e:
                rows.append(CheckRow("type", f"%{ins.result}", ins.offset, str(e)))
                continue
            rows.append(CheckRow("type", describe(t), ins.offset, profile.coopmat_problem(t, W)))
    for f in m.functions.values():
        for b in f.blocks:
            for ins in b.instrs:
                if ins.opname == "OpCooperativeMatrixMulAddKHR":
                    rows.append(_muladd_row(m, spec, profile, ins, W))
    if "CooperativeMatrixConversionQCOM" in m.capabilities:
        from .codegen.rules.qcom_coopmat import check_rows
        rows += [CheckRow(*r) for r in check_rows(m, spec, profile, W)]
    for combo in coopvec_uses(m, spec):
        rows.append(CheckRow("coopvec", str(combo), 0,
                             None if coopvec_supported(profile.name, combo) else
                             f"the {profile.name} profile does not list this cooperative vector "
                             "combination"))
    return rows


def _muladd_row(m, spec, profile, ins, W) -> CheckRow:
    a, b, c = (spec.type(m.all_defs[x].result_type) for x in ins.operands[:3])
    r = spec.type(ins.result_type)
    flags = ins.operands[3] if len(ins.operands) > 3 else 0
    names = [type_name(x.elem) for x in (a, b, c, r)]
    sat = bool(flags & 16)                  # SaturatingAccumulationKHR
    what = (f"{r.rows}x{r.cols}x{a.cols} {names[0]} x {names[1]} + {names[2]} -> {names[3]}"
            f"{' saturating' if sat else ''} ({'subgroup' if r.scope == 3 else 'workgroup'})")
    return CheckRow("muladd", what, ins.offset,
                    profile.muladd_problem(r.rows, r.cols, a.cols, *names, sat, r.scope, W))


def format_rows(rows, profile) -> str:
    out = [f"device profile {profile.name}: {profile.description}"]
    if not rows:
        out.append("  the shader uses no cooperative matrix or vector types")
    counts: dict = {}
    for r in rows:                       # the same combination used n times: one line, "x n"
        counts.setdefault((r.kind, r.what, r.problem), []).append(r)
    for (kind, what, problem), rs in counts.items():
        mark = "ok " if problem is None else "NO "
        n = f"  (x{len(rs)})" if len(rs) > 1 else ""
        out.append(f"  {mark} {kind:<7} {what}{n}" + ("" if problem is None else f"\n        {problem}"))
    bad = sum(not r.ok for r in rows)
    out.append(f"{len(rows) - bad} supported, {bad} not supported")
    return "\n".join(out)


def compare_profiles(spirv: bytes, profiles: list, grid, arrays: dict, push=None, spec=None,
                     entry=None, **options) -> dict:
    """Run one dispatch under several device profiles, each on its own copy of the buffers.
    Returns {profile: {binding: array}} and, under "differences", for each binding whose results
    differ from the first profile's: the profile, how many elements differ and the first few
    (index, first profile's value, this profile's value). A layout-independent shader gives no
    differences; one that depends on a lane layout shows where."""
    import numpy as np

    import jitcoop
    results = {}
    for name in profiles:
        dev = jitcoop.Device(name)
        copies = {k: np.array(v, copy=True) for k, v in arrays.items()}
        k = dev.load(spirv).kernel(entry, spec=spec or {}, **options)
        k.dispatch(grid, copies, push=push)
        results[name] = copies
    base = profiles[0]
    diffs = []
    for name in profiles[1:]:
        for key, arr in results[name].items():
            ref = results[base][key]
            r8 = np.ascontiguousarray(ref).view(np.uint8).reshape(ref.size, -1)
            a8 = np.ascontiguousarray(arr).view(np.uint8).reshape(arr.size, -1)
            ne = np.flatnonzero(np.any(r8 != a8, axis=1))
            if len(ne):
                flat_r, flat_a = ref.reshape(-1), arr.reshape(-1)
                diffs.append(dict(profile=name, binding=key, count=int(len(ne)),
                                  first=[(int(i), flat_r[i].item(), flat_a[i].item()) for i in ne[:8]]))
    return dict(results=results, differences=diffs, baseline=base)
