"""What a module holds, for `jitcoop info` and `Module.info()`."""
from __future__ import annotations

from .spirv.grammar import grammar
from .spirv.module import Module
from .spirv.specialize import Specialization
from .spirv.types import Array, Opaque, Struct, describe, member_offsets, size_of

_MODELS = {5: "GLCompute"}
_COOP_TYPES = ("OpTypeCooperativeMatrixKHR", "OpTypeCooperativeMatrixNV", "OpTypeCooperativeVectorNV",
               "OpTypeTensorLayoutNV", "OpTypeTensorViewNV")


def _members(m: Module, t) -> list:
    if not isinstance(t, Struct):
        return []
    out = []
    for i, (mem, off) in enumerate(zip(t.members, member_offsets(t))):
        d = {"name": m.member_names.get((t.id, i), f"m{i}"), "offset": off, "type": describe(mem.type)}
        if isinstance(mem.type, Array):
            d["array_stride"] = size_of(mem.type) // mem.type.length if mem.type.length else \
                (mem.type.stride or None)
        if mem.matrix_stride:
            d["matrix_stride"] = mem.matrix_stride
            d["row_major"] = mem.row_major
        if m.member_decoration(t.id, i, "NonWritable") is not None:
            d["readonly"] = True
        out.append(d)
    return out


def module_info(m: Module) -> dict:
    sp = Specialization(m)
    g = grammar()
    eps = []
    for e in m.entry_points:
        ep = {"name": e.name, "model": _MODELS.get(e.model, g.enum_name("ExecutionModel", e.model))}
        for mode, args, is_id in e.modes:
            if mode == "LocalSize":
                ep["local_size"] = list(args)
            elif mode == "LocalSizeId":
                ep["local_size"] = [int(sp.scalar_const(a)) for a in args]
                ep["local_size_spec_ids"] = [(m.decoration(a, "SpecId") or [None])[0] for a in args]
        eps.append(ep)
    bindings, push, shared = [], None, 0
    for ins in m.global_order:
        if ins.opname != "OpVariable":
            continue
        pt = sp.type(ins.result_type)
        sc = pt.storage
        t = pt.pointee
        if sc in ("StorageBuffer", "Uniform", "UniformConstant"):
            ds = m.decoration(ins.result, "DescriptorSet", [0])[0]
            bd = m.decoration(ins.result, "Binding", [0])[0]
            bindings.append({"set": ds, "binding": bd, "name": m.names.get(ins.result, ""),
                             "storage": sc, "block": m.names.get(getattr(t, "id", -1), describe(t)),
                             "size": size_of(t) if not isinstance(t, Opaque) else None,
                             "readonly": m.has_decoration(ins.result, "NonWritable") or (
                                 sc == "Uniform" and not m.has_decoration(getattr(t, "id", -1), "BufferBlock")),
                             "members": _members(m, t)})
        elif sc == "PushConstant":
            push = {"name": m.names.get(ins.result, ""), "size": size_of(t), "members": _members(m, t)}
        elif sc == "Workgroup":
            shared += size_of(t)
    specs = []
    for ins in m.global_order:
        if ins.opname.startswith("OpSpecConstant") and ins.opname != "OpSpecConstantOp" \
                and not ins.opname.startswith("OpSpecConstantComposite"):
            sid = m.decoration(ins.result, "SpecId")
            if sid is None:
                continue
            specs.append({"spec_id": sid[0], "name": m.names.get(ins.result, ""),
                          "type": describe(sp.type(ins.result_type)), "default": sp.const(ins.result)[0]})
    coop = []
    for ins in m.global_order:
        if ins.opname in _COOP_TYPES:
            ops = []
            for x, k in zip(ins.operands, ins.kinds):
                if k in ("IdRef", "IdScope") and sp.is_const(x):
                    ops.append(sp.scalar_const(x))
                elif k == "IdRef" and x in m.defs and m.defs[x].opname.startswith("OpType"):
                    ops.append(describe(sp.type(x)))
                else:
                    ops.append(x)
            coop.append({"type": ins.opname, "id": ins.result, "operands": ops})
    return {"version": "%d.%d" % m.header.version, "entry_points": eps, "capabilities": m.capabilities,
            "extensions": m.extensions, "bindings": sorted(bindings, key=lambda b: (b["set"], b["binding"])),
            "push_constants": push, "spec_constants": sorted(specs, key=lambda s: s["spec_id"]),
            "workgroup_memory_bytes": shared, "cooperative_types": coop}


def format_info(d: dict) -> str:
    out = [f"SPIR-V {d['version']}"]
    for e in d["entry_points"]:
        ls = e.get("local_size")
        out.append(f"entry point {e['name']!r} ({e['model']}), local size {tuple(ls) if ls else '?'}")
    out.append("capabilities: " + ", ".join(d["capabilities"]))
    if d["extensions"]:
        out.append("extensions: " + ", ".join(d["extensions"]))
    for b in d["bindings"]:
        out.append(f"binding (set {b['set']}, binding {b['binding']}) {b['name'] or '<anon>'}: "
                   f"{b['storage']} {b['block']}, {b['size']} bytes{' (read-only)' if b['readonly'] else ''}")
        out += _format_members(b["members"])
    if d["push_constants"]:
        p = d["push_constants"]
        out.append(f"push constants {p['name'] or '<anon>'}: {p['size']} bytes")
        out += _format_members(p["members"])
    for s in d["spec_constants"]:
        out.append(f"spec constant {s['spec_id']} {s['name'] or ''}: {s['type']} = {s['default']}")
    if d["workgroup_memory_bytes"]:
        out.append(f"workgroup memory: {d['workgroup_memory_bytes']} bytes")
    for c in d["cooperative_types"]:
        out.append(f"cooperative type %{c['id']}: {c['type']} {c['operands']}")
    return "\n".join(out)


def _format_members(members):
    out = []
    for mm in members:
        extra = "".join(f", {k} {v}" for k, v in mm.items() if k not in ("name", "offset", "type"))
        out.append(f"    +{mm['offset']:<5} {mm['name']}: {mm['type']}{extra}")
    return out
