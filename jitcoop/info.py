"""What a module holds, for `jitcoop info` and `Module.info()`.

`module_info(m)` reads a decoded module (`jitcoop.spirv.module.Module`) with every spec constant
at its default and returns plain data (JSON-ready): entry points and their local sizes, capabilities,
extensions, descriptor bindings with their block layouts, the push constant block, spec constants,
the cooperative types the module declares, and its workgroup memory. `format_info(d)` writes that
for people. Nothing here needs the module to be runnable: unsupported capabilities still show.
"""
from __future__ import annotations

from .errors import JitcoopError
from .spirv.grammar import grammar
from .spirv.module import Module
from .spirv.specialize import Specialization
from .spirv.types import (Array, Matrix, Opaque, Pointer, Struct, array_stride, describe,
                          member_offsets, size_of)

_COOP_TYPES = ("OpTypeCooperativeMatrixKHR", "OpTypeCooperativeMatrixNV", "OpTypeCooperativeVectorNV",
               "OpTypeTensorLayoutNV", "OpTypeTensorViewNV")
_BUFFER_CLASSES = ("StorageBuffer", "Uniform", "UniformConstant")


def module_info(m: Module) -> dict:
    """Everything a user of the module needs to know to bind and dispatch it, as plain data."""
    sp = Specialization(m)
    g = grammar()
    spec_roles = _spec_roles(m, sp)
    bindings, push, workgroup = [], None, []
    for ins in m.global_order:
        if ins.opname != "OpVariable":
            continue
        try:
            pt = sp.type(ins.result_type)
        except JitcoopError:
            continue
        if not isinstance(pt, Pointer):
            continue
        sc = pt.storage
        if sc in _BUFFER_CLASSES or m.has_decoration(ins.result, "Binding"):
            bindings.append(_binding(m, sp, ins, pt))
        elif sc == "PushConstant":
            push = _block(m, sp, ins.result, pt.pointee)
        elif sc == "Workgroup":
            workgroup.append(_workgroup_var(m, ins.result, pt.pointee))
    eps = []
    for e in m.entry_points:
        ep = {"name": e.name, "execution_model": g.enum_name("ExecutionModel", e.model)}
        ep.update(_local_size(m, sp, e))
        ep["modes"] = [_mode_text(m, sp, mode, args, is_id) for mode, args, is_id in e.modes
                       if mode not in ("LocalSize", "LocalSizeId")]
        # Since SPIR-V 1.4 the interface lists every global variable the entry point uses.
        if m.header.version >= (1, 4):
            iface = set(e.interface)
            ep["workgroup_memory_bytes"] = _workgroup_total([w for w in workgroup if w["id"] in iface])
        else:
            ep["workgroup_memory_bytes"] = _workgroup_total(workgroup)
        eps.append(ep)
    specs = {}
    for ins in m.global_order:
        if ins.opname not in ("OpSpecConstant", "OpSpecConstantTrue", "OpSpecConstantFalse"):
            continue
        sid = m.decoration(ins.result, "SpecId")
        if sid is None:
            continue
        s = specs.setdefault(sid[0], {"spec_id": sid[0], "name": "", "type": "?", "default": None,
                                      "ids": [], "used_for": []})
        s["ids"].append(ins.result)
        if not s["name"] and m.names.get(ins.result):
            s["name"] = m.names[ins.result]
        try:
            s["type"] = describe(sp.type(ins.result_type))
            s["default"] = sp.const(ins.result)[0]
        except JitcoopError:
            pass
        for role in spec_roles.get(ins.result, ()):
            if role not in s["used_for"]:
                s["used_for"].append(role)
    return {
        "version": "%d.%d" % tuple(m.header.version),
        "bound": m.header.bound,
        "entry_points": eps,
        "capabilities": list(m.capabilities),
        "extensions": list(m.extensions),
        "ext_inst_imports": sorted(m.ext_imports.values()),
        "bindings": sorted(bindings, key=lambda b: (b["set"], b["binding"])),
        "push_constants": push,
        "spec_constants": [specs[k] for k in sorted(specs)],
        "cooperative_types": [_coop_type(m, sp, ins) for ins in m.global_order if _is_coop(ins.opname)],
        "workgroup_memory": {"bytes": _workgroup_total(workgroup), "variables": workgroup},
    }


# -- entry points -----------------------------------------------------------------------------------
def _spec_id(m: Module, cid: int):
    ins = m.defs.get(cid)
    if ins is None or not ins.opname.startswith("OpSpecConstant"):
        return None
    sid = m.decoration(cid, "SpecId")
    return sid[0] if sid else None


def _workgroup_size_const(m: Module):
    """The constant decorated BuiltIn WorkgroupSize, if any (it overrides LocalSize)."""
    g = grammar()
    for ins in m.global_order:
        if ins.result is None:
            continue
        bi = m.decoration(ins.result, "BuiltIn")
        if bi and g.enum_name("BuiltIn", bi[0]) == "WorkgroupSize" and ins.opname.startswith(
                ("OpConstantComposite", "OpSpecConstantComposite")):
            return ins
    return None


def _local_size(m: Module, sp: Specialization, e) -> dict:
    out = {"local_size": None, "local_size_from": None, "local_size_spec_ids": None}
    for mode, args, is_id in e.modes:
        if mode == "LocalSize":
            out.update(local_size=list(args), local_size_from="LocalSize")
        elif mode == "LocalSizeId":
            try:
                out["local_size"] = [int(sp.scalar_const(a)) for a in args]
            except JitcoopError:
                out["local_size"] = None
            out["local_size_from"] = "LocalSizeId"
            out["local_size_spec_ids"] = [_spec_id(m, a) for a in args]
    ws = _workgroup_size_const(m)
    if ws is not None:
        try:
            out["local_size"] = [int(v) for v in sp.const(ws.result)]
        except JitcoopError:
            pass
        out["local_size_from"] = "WorkgroupSize"
        out["local_size_spec_ids"] = [_spec_id(m, c) for c in ws.operands]
    if out["local_size_spec_ids"] is not None and not any(x is not None for x in out["local_size_spec_ids"]):
        out["local_size_spec_ids"] = None
    return out


def _spec_roles(m: Module, sp: Specialization) -> dict:
    """Spec constant id -> what it sizes ("local_size_x", "array length of %T"...)."""
    roles: dict[int, list] = {}
    for e in m.entry_points:
        for mode, args, is_id in e.modes:
            if mode == "LocalSizeId":
                for axis, a in zip("xyz", args):
                    roles.setdefault(a, []).append(f"local_size_{axis}")
    ws = _workgroup_size_const(m)
    if ws is not None:
        for axis, c in zip("xyz", ws.operands):
            roles.setdefault(c, []).append(f"local_size_{axis}")
    for ins in m.global_order:
        if ins.opname == "OpTypeArray":
            roles.setdefault(ins.operands[1], []).append(f"array length ({_type_name(m, sp, ins.result)})")
        elif _is_coop(ins.opname):
            for name, x in zip(_operand_names(ins), ins.operands):
                if name not in ("component_type",):
                    roles.setdefault(x, []).append(f"{name} of {ins.opname[6:]} %{ins.result}")
    return roles


def _mode_text(m: Module, sp: Specialization, mode: str, args: list, is_id: bool) -> str:
    if not args:
        return mode
    vals = []
    for a in args:
        if is_id:
            try:
                vals.append(str(sp.scalar_const(a)))
            except JitcoopError:
                vals.append(f"%{a}")
        else:
            vals.append(str(a))
    return f"{mode} {' '.join(vals)}"


# -- bindings and blocks ------------------------------------------------------------------------------
def _type_name(m: Module, sp: Specialization, tid: int) -> str:
    try:
        return _tname(m, sp.type(tid))
    except JitcoopError:
        return f"%{tid}"


def _tname(m: Module, t) -> str:
    """A type as people read it: structs by their OpName, the rest as `describe` writes them."""
    if isinstance(t, Struct):
        n = m.names.get(t.id) if t.id is not None else None
        return n or "struct{" + ", ".join(_tname(m, x.type) for x in t.members) + "}"
    if isinstance(t, Array):
        return f"{_tname(m, t.elem)}[{'' if t.length is None else t.length}]"
    if isinstance(t, Pointer):
        return f"ptr<{t.storage}, {_tname(m, t.pointee) if t.pointee is not None else '?'}>"
    return describe(t)


def _binding(m: Module, sp: Specialization, ins, pt: Pointer) -> dict:
    var = ins.result
    t = pt.pointee
    count = None
    if isinstance(t, Array) and isinstance(t.elem, (Struct, Opaque)):       # a descriptor array
        count = t.length                                                     # None: runtime sized
        t = t.elem
    sc = pt.storage
    tid = getattr(t, "id", None)
    buffer_block = tid is not None and m.has_decoration(tid, "BufferBlock")
    if sc == "StorageBuffer" or buffer_block:
        kind = "storage buffer"
    elif sc == "Uniform":
        kind = "uniform buffer"
    elif isinstance(t, Opaque):
        kind = t.opname[6:].lower() if t.opname.startswith("OpType") else t.opname
    else:
        kind = sc
    d = {"set": m.decoration(var, "DescriptorSet", [0])[0],
         "binding": m.decoration(var, "Binding", [0])[0],
         "name": m.names.get(var) or (m.names.get(tid, "") if tid is not None else ""),
         "variable": m.names.get(var, ""),
         "id": var,
         "storage_class": sc,
         "kind": kind}
    if count is not None or isinstance(pt.pointee, Array) and isinstance(pt.pointee.elem, (Struct, Opaque)):
        d["descriptor_count"] = count
    if isinstance(t, Struct):
        d.update(_block(m, sp, var, t))
        nonwritable = m.has_decoration(var, "NonWritable") or (
            t.members and all(m.member_decoration(tid, i, "NonWritable") is not None
                              for i in range(len(t.members))))
        d["readonly"] = bool(kind == "uniform buffer" or nonwritable)
        d["writeonly"] = bool(m.has_decoration(var, "NonReadable") or (
            t.members and all(m.member_decoration(tid, i, "NonReadable") is not None
                              for i in range(len(t.members)))))
    else:
        d["type"] = _tname(m, t)
        d["readonly"] = m.has_decoration(var, "NonWritable")
        d["writeonly"] = m.has_decoration(var, "NonReadable")
    return d


def _block(m: Module, sp: Specialization, var: int, t) -> dict:
    """A Block struct: its size (the fixed part), the element stride of a trailing runtime array,
    and its members."""
    d = {"variable": m.names.get(var, ""), "block": _tname(m, t)}
    try:
        size = size_of(t)
    except TypeError:
        size = None
    d["size"] = size
    if isinstance(t, Struct):
        last = t.members[-1].type if t.members else None
        if isinstance(last, Array) and last.length is None:
            d["size"] = member_offsets(t)[-1]
            d["runtime_array_stride"] = array_stride(last)
        d["members"] = _members(m, t)
    else:
        d["members"] = []
    return d


def _members(m: Module, t: Struct) -> list:
    out = []
    for i, (mem, off) in enumerate(zip(t.members, member_offsets(t))):
        mt = mem.type
        d = {"name": m.member_names.get((t.id, i)) or f"member{i}", "offset": off, "type": _tname(m, mt)}
        try:
            d["size"] = size_of(mt, mem)
        except TypeError:
            d["size"] = None
        strides, inner = [], mt
        while isinstance(inner, Array):
            strides.append(array_stride(inner))
            inner = inner.elem
        if strides:
            d["array_stride"] = strides[0] if len(strides) == 1 else strides
        if isinstance(inner, Matrix):
            d["matrix_stride"] = mem.matrix_stride if mem.matrix_stride is not None else \
                m.member_decoration(t.id, i, "MatrixStride", [None])[0]
            d["row_major"] = mem.row_major
        if m.member_decoration(t.id, i, "NonWritable") is not None:
            d["readonly"] = True
        if m.member_decoration(t.id, i, "NonReadable") is not None:
            d["writeonly"] = True
        if mem.builtin:
            d["builtin"] = mem.builtin
        if isinstance(inner, Struct):
            d["members"] = _members(m, inner)
        out.append(d)
    return out


def _workgroup_var(m: Module, var: int, t) -> dict:
    try:
        size = size_of(t)
    except TypeError:
        size = 0
    return {"name": m.names.get(var) or f"%{var}", "id": var, "type": _tname(m, t), "size": size,
            # With WorkgroupMemoryExplicitLayoutKHR, Block-decorated workgroup variables alias.
            "aliased": isinstance(t, Struct) and m.has_decoration(t.id, "Block")}


def _workgroup_total(vs: list) -> int:
    aliased = [v["size"] for v in vs if v["aliased"]]
    return sum(v["size"] for v in vs if not v["aliased"]) + (max(aliased) if aliased else 0)


# -- cooperative types --------------------------------------------------------------------------------
def _is_coop(opname: str) -> bool:
    return opname in _COOP_TYPES or opname.startswith(("OpTypeCooperative", "OpTypeTensor"))


_OPERAND_NAMES = {
    "OpTypeCooperativeMatrixKHR": ("component_type", "scope", "rows", "columns", "use"),
    "OpTypeCooperativeMatrixNV": ("component_type", "scope", "rows", "columns"),
    "OpTypeCooperativeVectorNV": ("component_type", "components"),
    "OpTypeTensorLayoutNV": ("dim", "clamp_mode"),
    "OpTypeTensorViewNV": ("dim", "has_dimensions"),
}
_ENUMS = {"scope": "Scope", "use": "CooperativeMatrixUse", "clamp_mode": "TensorClampMode"}


def _operand_names(ins) -> list:
    names = list(_OPERAND_NAMES.get(ins.opname, ()))
    if ins.opname == "OpTypeTensorViewNV":
        names += [f"p{i}" for i in range(len(ins.operands) - 2)]
    while len(names) < len(ins.operands):
        names.append(f"operand{len(names)}")
    return names[:len(ins.operands)]


def _coop_type(m: Module, sp: Specialization, ins) -> dict:
    g = grammar()
    d = {"id": ins.result, "opname": ins.opname, "name": m.names.get(ins.result, "")}
    spec_ids = {}
    perm = []
    for name, x, kind in zip(_operand_names(ins), ins.operands, ins.kinds):
        x_def = m.defs.get(x) if kind in ("IdRef", "IdScope") else None
        if x_def is not None and x_def.opname.startswith("OpType"):
            val = _type_name(m, sp, x)
        elif x_def is not None and sp.is_const(x):
            try:
                val = sp.scalar_const(x)
            except JitcoopError:
                val = f"%{x}"
            sid = _spec_id(m, x)
            if sid is not None:
                spec_ids[name] = sid
            elif x_def.opname == "OpSpecConstantOp":
                spec_ids[name] = "expr"
            if name in _ENUMS and isinstance(val, int):
                val = g.enum_name(_ENUMS[name], val)
            elif name == "has_dimensions":
                val = bool(val)
        else:
            val = f"%{x}" if kind in ("IdRef", "IdScope") else x
        if name.startswith("p") and name[1:].isdigit():
            perm.append(val)
        else:
            d[name] = val
    if ins.opname == "OpTypeTensorViewNV":
        d["permutation"] = perm
    if spec_ids:
        d["spec_ids"] = spec_ids
    d["summary"] = _coop_summary(d)
    return d


def _coop_summary(d: dict) -> str:
    op = d["opname"]
    use = {"MatrixAKHR": "A", "MatrixBKHR": "B", "MatrixAccumulatorKHR": "Accumulator"}
    if op == "OpTypeCooperativeMatrixKHR":
        return (f"coopmat<{d.get('component_type')}, {d.get('scope')}, {d.get('rows')}x{d.get('columns')}, "
                f"{use.get(d.get('use'), d.get('use'))}>")
    if op == "OpTypeCooperativeMatrixNV":
        return f"fcoopmatNV<{d.get('component_type')}, {d.get('scope')}, {d.get('rows')}x{d.get('columns')}>"
    if op == "OpTypeCooperativeVectorNV":
        return f"coopvecNV<{d.get('component_type')}, {d.get('components')}>"
    if op == "OpTypeTensorLayoutNV":
        return f"tensorLayoutNV<{d.get('dim')}, {d.get('clamp_mode')}>"
    if op == "OpTypeTensorViewNV":
        return (f"tensorViewNV<{d.get('dim')}, {str(d.get('has_dimensions')).lower()}"
                + "".join(f", {p}" for p in d.get("permutation", [])) + ">")
    rest = ", ".join(f"{k}={v}" for k, v in d.items() if k not in ("id", "opname", "name", "spec_ids"))
    return f"{op[6:]}<{rest}>"


# -- for people ---------------------------------------------------------------------------------------
def format_info(d: dict) -> str:
    out = [f"SPIR-V {d['version']}, id bound {d['bound']}"]
    for e in d["entry_points"]:
        ls = e.get("local_size")
        line = f"entry point {e['name']!r} ({e['execution_model']})"
        if ls:
            line += f", local size {tuple(ls)}"
            sids = e.get("local_size_spec_ids")
            if sids:
                line += " (" + ", ".join(f"{ax} = spec {s}" for ax, s in zip("xyz", sids) if s is not None) + ")"
        if e.get("workgroup_memory_bytes"):
            line += f", {e['workgroup_memory_bytes']} bytes of workgroup memory"
        out.append(line)
        if e.get("modes"):
            out.append("    modes: " + ", ".join(e["modes"]))
    out.append("capabilities: " + (", ".join(d["capabilities"]) or "none"))
    if d["extensions"]:
        out.append("extensions: " + ", ".join(d["extensions"]))
    if d.get("ext_inst_imports"):
        out.append("extended instruction sets: " + ", ".join(d["ext_inst_imports"]))
    if d["bindings"]:
        out.append("bindings:")
    for b in d["bindings"]:
        access = "read-only" if b.get("readonly") else "write-only" if b.get("writeonly") else "read-write"
        name = b["name"] or f"%{b['id']}"
        head = f"  set {b['set']} binding {b['binding']}: {name} ({b['kind']}, {access}"
        if "descriptor_count" in b:
            head += f", array of {b['descriptor_count'] if b['descriptor_count'] is not None else 'runtime'}"
        if "block" in b:
            head += f", {_size_text(b)})"
        else:
            head += f", {b.get('type', '?')})"
        out.append(head)
        out += _format_members(b.get("members", []), "      ")
    p = d.get("push_constants")
    if p:
        out.append(f"push constants: {p['variable'] or p['block']} ({p['block']}, {_size_text(p)})")
        out += _format_members(p["members"], "      ")
    if d["spec_constants"]:
        out.append("specialization constants:")
    for s in d["spec_constants"]:
        name = f" {s['name']}" if s["name"] else ""
        used = f"  [{'; '.join(s['used_for'])}]" if s.get("used_for") else ""
        out.append(f"  {s['spec_id']}{name}: {s['type']} = {_value_text(s['default'])}{used}")
    wg = d["workgroup_memory"]
    if wg["variables"]:
        out.append(f"workgroup memory: {wg['bytes']} bytes")
        for v in wg["variables"]:
            out.append(f"  {v['name']}: {v['type']}, {v['size']} bytes{' (aliased block)' if v['aliased'] else ''}")
    if d["cooperative_types"]:
        out.append("cooperative types:")
    for c in d["cooperative_types"]:
        sids = c.get("spec_ids")
        extra = ("  (spec: " + ", ".join(f"{k} = {v}" for k, v in sids.items()) + ")") if sids else ""
        out.append(f"  %{c['id']}: {c['summary']}{extra}")
    return "\n".join(out)


def _size_text(b: dict) -> str:
    if b.get("size") is None:
        return "size ?"
    if "runtime_array_stride" in b:
        return f"{b['size']} + {b['runtime_array_stride']} * n bytes"
    return f"{b['size']} bytes"


def _value_text(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v) if isinstance(v, float) else str(v)


def _format_members(members: list, indent: str) -> list:
    out = []
    for mm in members:
        extra = []
        if "array_stride" in mm:
            extra.append(f"array stride {mm['array_stride']}")
        if "matrix_stride" in mm:
            extra.append(f"matrix stride {mm['matrix_stride']}, {'row' if mm['row_major'] else 'column'}-major")
        if mm.get("readonly"):
            extra.append("read-only")
        if mm.get("writeonly"):
            extra.append("write-only")
        if mm.get("builtin"):
            extra.append(f"builtin {mm['builtin']}")
        tail = f"  ({', '.join(extra)})" if extra else ""
        out.append(f"{indent}+{mm['offset']:<5} {mm['name']}: {mm['type']}{tail}")
        if mm.get("members"):
            out += _format_members(mm["members"], indent + "    ")
    return out
