"""The report of a profiled dispatch: `k.dispatch(..., profile=True).profile` and `jitcoop profile`.

Two tables:

- callbacks: one row per callback function at each instruction that calls it (DecodeFunc and
  DecodeVectorFunc of a tensor load, a per-element Func, a reduction's CombineFunc): the path
  (scalar or vector decode), calls, elements produced, time (cycle counter: inside the function;
  for decode functions, the load's whole element loop, its addressing included, since clock
  reads around every call of a small function would cost more than it), ns per element, and the
  bytes the function read;
- instructions: one row per collective instruction of the shader (cooperative matrix and vector
  instructions, barriers, subgroup operations): runs of the scheduler, scope instances, matrix
  elements moved, time.

Rows are plain dicts (`pandas.DataFrame(report.callbacks)` works); `str(report)` is the table.
"""
from __future__ import annotations

import numpy as np

from .kernels.profile import seconds_per_tick


def _site(ins) -> str:
    rid = f"%{ins.result} = " if ins.result is not None else ""
    return f"{rid}{ins.opname} @{ins.offset}"


class ProfileReport:
    def __init__(self, layout, counters: np.ndarray, names: dict, wall: float, workgroups: int,
                 lanes: tuple | None = None, tier: str = "optimized"):
        spt = seconds_per_tick()
        c = counters
        self.wall_seconds = wall
        self.workgroups = workgroups
        self.tier = tier            # the compile tier of the code profiled (jitcoop.runtime.tiers)
        # (invocations run per workgroup, workgroup size, why they differ, lane group, why none)
        self.lanes = lanes
        self.callbacks: list[dict] = []
        self.instructions: list[dict] = []
        read = {g["fid"]: int(c[g["base"]]) for g in layout.groups if g["kind"] == "callback"}

        def fn_name(fid):
            return names.get(fid) or f"%{fid}"

        for g in layout.groups:
            b, kind = g["base"], g["kind"]
            if kind == "decode":
                for which, role, fid in ((0, "DecodeFunc", g["decode"]), (1, "DecodeVectorFunc", g["vector"])):
                    calls, elems, ticks = int(c[b + which]), int(c[b + 2 + which]), int(c[b + 4 + which])
                    if fid is None or (which == 1 and calls == 0 and g["vector"] is None):
                        continue
                    self._callback(fn_name(fid), role, "vector" if which else "scalar", g["ins"], calls,
                                   elems, ticks * spt, read.get(fid, 0))
            elif kind in ("combine", "per-element"):
                role = "CombineFunc" if kind == "combine" else "per-element Func"
                self._callback(fn_name(g["fid"]), role, "scalar", g["ins"], int(c[b]), int(c[b + 1]),
                               int(c[b + 2]) * spt, read.get(g["fid"], 0))
            elif kind == "instruction":
                t = g.get("type")
                runs, lanes, ticks = int(c[b]), int(c[b + 1]), int(c[b + 2])
                inst = elements = None
                if t is not None:
                    inv = t.layout.invocations if t.layout is not None else 1
                    inst = lanes // max(1, inv)
                    elements = inst * t.rows * t.cols
                self.instructions.append(dict(
                    instruction=_site(g["ins"]), opname=g["ins"].opname, result_id=g["ins"].result,
                    offset=g["ins"].offset, runs=runs, lanes=lanes, instances=inst, elements=elements,
                    seconds=ticks * spt))

    def _callback(self, name, role, path, ins, calls, elements, seconds, nbytes):
        self.callbacks.append(dict(
            function=name, role=role, path=path, instruction=_site(ins), calls=calls,
            elements=elements, seconds=seconds,
            ns_per_element=(seconds * 1e9 / elements) if elements else None, bytes_read=nbytes))

    def to_dict(self) -> dict:
        out = {"wall_seconds": self.wall_seconds, "workgroups": self.workgroups, "tier": self.tier,
               "callbacks": self.callbacks, "instructions": self.instructions}
        if self.lanes is not None:
            run, size, why, group, why_not = self.lanes
            out["invocations"] = {"run_per_workgroup": run, "workgroup_size": size, "why_they_differ": why,
                                  "lane_group": group, "why_no_lane_group": why_not}
        return out

    def __str__(self) -> str:
        return format_report(self)


def _table(rows, cols, left=2) -> list[str]:
    """Text columns (the first `left`) flush left, numbers flush right."""
    cells = [[h for h, _ in cols]] + [[f(r) for _, f in cols] for r in rows]
    w = [max(len(row[i]) for row in cells) for i in range(len(cols))]
    out = []
    for j, row in enumerate(cells):
        out.append("  ".join(x.ljust(w[i]) if i < left else x.rjust(w[i]) for i, x in enumerate(row)).rstrip())
        if j == 0:
            out.append("  ".join("-" * x for x in w))
    return out


def _num(x) -> str:
    return "-" if x is None else f"{x:,}"


def _ms(x) -> str:
    return f"{x * 1e3:.3f}"


def format_report(r: ProfileReport) -> str:
    lines = [f"dispatch: {r.workgroups} workgroups, {r.wall_seconds * 1e3:.3f} ms, {r.tier} tier "
             "(profiled: counters and clock reads add time)"]
    if r.lanes is not None:
        run, size, why, group, why_not = r.lanes
        lines.append(f"invocations: the code of {run} of {size} runs per workgroup "
                     + ("(lane-invariant: none can differ from another)" if run < size or why is None
                        else f"(they may differ: the shader {why})"))
        if run == size and size > 1:
            lines.append(f"lane groups: {group} invocations at a time in vector code" if group
                         else f"lane groups: none ({why_not}): one invocation at a time")
    if r.callbacks:
        lines += ["", "callbacks"]
        lines += _table(r.callbacks, [
            ("function", lambda x: x["function"]), ("role / path", lambda x: f"{x['role']} / {x['path']}"),
            ("at", lambda x: x["instruction"]), ("calls", lambda x: _num(x["calls"])),
            ("elements", lambda x: _num(x["elements"])), ("ms", lambda x: _ms(x["seconds"])),
            ("ns/elem", lambda x: "-" if x["ns_per_element"] is None else f"{x['ns_per_element']:.1f}"),
            ("bytes read", lambda x: _num(x["bytes_read"]))], left=3)
    if r.instructions:
        lines += ["", "collective instructions"]
        lines += _table(r.instructions, [
            ("instruction", lambda x: x["instruction"]),
            ("runs", lambda x: _num(x["runs"])), ("instances", lambda x: _num(x["instances"])),
            ("elements", lambda x: _num(x["elements"])), ("ms", lambda x: _ms(x["seconds"]))], left=1)
    return "\n".join(lines)


def compare_rows(a: ProfileReport, b: ProfileReport) -> list[dict]:
    """Two profiles of one workload side by side, as rows: per callback role and path the
    elements (ea, eb), ns per element (na, nb) and bytes read (ba, bb) of A and B and the ratio
    B/A of the ns per element; then the collective instructions' and the dispatch's times in ms
    (na, nb). `what` names the row."""
    def by_role(r):
        out = {}
        for x in r.callbacks:
            k = (x["role"], x["path"])
            s = out.setdefault(k, [0, 0, 0.0, 0])
            s[0] += x["calls"]
            s[1] += x["elements"]
            s[2] += x["seconds"]
            s[3] += x["bytes_read"]
        return out

    ra, rb = by_role(a), by_role(b)
    rows = []
    for k in sorted(set(ra) | set(rb)):
        x, y = ra.get(k, [0, 0, 0.0, 0]), rb.get(k, [0, 0, 0.0, 0])
        nx = x[2] * 1e9 / x[1] if x[1] else None
        ny = y[2] * 1e9 / y[1] if y[1] else None
        rows.append(dict(what=f"{k[0]} / {k[1]}", ea=x[1], eb=y[1], na=nx, nb=ny, ba=x[3], bb=y[3],
                         ratio=(ny / nx) if nx and ny else None))
    ta = sum(i["seconds"] for i in a.instructions)
    tb = sum(i["seconds"] for i in b.instructions)
    rows.append(dict(what="collective instructions (ms)", ea=None, eb=None, na=ta * 1e3, nb=tb * 1e3,
                     ba=None, bb=None, ratio=(tb / ta) if ta else None))
    rows.append(dict(what="dispatch wall time (ms)", ea=None, eb=None, na=a.wall_seconds * 1e3,
                     nb=b.wall_seconds * 1e3, ba=None, bb=None,
                     ratio=(b.wall_seconds / a.wall_seconds) if a.wall_seconds else None))
    return rows


def format_compare(a: ProfileReport, b: ProfileReport, name_a: str, name_b: str) -> str:
    """Two profiles of one workload side by side: per callback role and path, and in total."""
    rows = compare_rows(a, b)
    f = lambda v: "-" if v is None else f"{v:.1f}"
    lines = [f"A = {name_a}", f"B = {name_b}", ""]
    lines += _table(rows, [
        ("callback role / path", lambda x: x["what"]),
        ("A elements", lambda x: _num(x["ea"])), ("B elements", lambda x: _num(x["eb"])),
        ("A ns/elem", lambda x: f(x["na"])), ("B ns/elem", lambda x: f(x["nb"])),
        ("A bytes", lambda x: _num(x["ba"])), ("B bytes", lambda x: _num(x["bb"])),
        ("B/A", lambda x: "-" if x["ratio"] is None else f"{x['ratio']:.2f}x")], left=1)
    return "\n".join(lines)
