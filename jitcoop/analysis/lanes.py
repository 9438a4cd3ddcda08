"""Whether a module can tell which invocation holds which element of a cooperative matrix.

A device profile's lane layout (jitcoop.devices.layouts: the H100's fragments, lavapipe's, ...)
is observable only through instructions that look into a lane's fragment: extracting or
inserting its components, access chains into a matrix, OpCooperativeMatrixLengthKHR (the
fragment length: replicated layouts hold more), bitcasts of matrices, and the QCOM conversions
between a lane's vector and its matrix elements. Everything else (loads, stores, MulAdds,
elementwise arithmetic, conversions, per-element operations with their row and column,
reductions, transposes, tensor addressing) gives the same results in any layout.

When nothing looks, the code generator may hold the matrices in the striped layout (element
k = e * inv + lane), the one its loads, stores and MulAdds move in whole vectors, whatever the
profile: a shader written for the H100 then runs as fast as on the generic profile, with the
same results. This module decides that from the module alone, before any matrix type is laid
out; it is conservative (any such instruction anywhere in the module counts).
"""
from __future__ import annotations

_CHAINS = ("OpAccessChain", "OpInBoundsAccessChain", "OpPtrAccessChain", "OpInBoundsPtrAccessChain")
_COOP_TYPES = ("OpTypeCooperativeMatrixKHR", "OpTypeCooperativeMatrixNV")


def observed(m) -> str | None:
    """The first instruction of module m that looks into a lane's fragment, described; None
    when no instruction does."""
    defs = m.all_defs

    def value_type(x):
        d = defs.get(x)
        return d.result_type if d is not None else None

    def is_coop(tid) -> bool:
        d = defs.get(tid)
        return d is not None and d.opname in _COOP_TYPES

    def into_matrix(base_ptr_type, indexes) -> bool:
        """Whether an access chain's indexes walk into a matrix's components."""
        d = defs.get(base_ptr_type)
        if d is None or d.opname != "OpTypePointer":
            return False
        t = d.operands[1]
        for x in indexes:
            if is_coop(t):
                return True
            d = defs.get(t)
            if d is None:
                return False
            if d.opname in ("OpTypeArray", "OpTypeRuntimeArray", "OpTypeVector", "OpTypeMatrix"):
                t = d.operands[0]
            elif d.opname == "OpTypeStruct":
                c = defs.get(x)
                if c is None or c.opname != "OpConstant" or not 0 <= c.operands[0] < len(d.operands):
                    return True             # not a plain constant: assume the worst
                t = d.operands[c.operands[0]]
            else:
                return False
        return False

    for fn in m.functions.values():
        for b in fn.blocks:
            for ins in b.instrs:
                op, o = ins.opname, ins.operands
                looks = False
                if op.endswith("QCOM") or op == "OpCooperativeMatrixLengthKHR":
                    looks = True
                elif op in ("OpCompositeExtract", "OpVectorExtractDynamic"):
                    looks = is_coop(value_type(o[0]))
                elif op in ("OpCompositeInsert", "OpVectorInsertDynamic"):
                    looks = is_coop(ins.result_type)
                elif op == "OpBitcast":
                    looks = is_coop(ins.result_type) or is_coop(value_type(o[0]))
                elif op in _CHAINS:
                    first = 2 if op in ("OpPtrAccessChain", "OpInBoundsPtrAccessChain") else 1
                    looks = into_matrix(value_type(o[0]), o[first:])
                if looks:
                    return f"{op} at byte {ins.offset}"
    return None
