"""Core control flow: branches, switches, returns, phis and the instructions that emit nothing."""
from __future__ import annotations

from ...spirv.types import Pointer
from . import rule


@rule("OpBranch")
def _branch(em, ins):
    em.goto(ins.operands[0])


@rule("OpBranchConditional")
def _branch_conditional(em, ins):
    cond, t, f = ins.operands[:3]
    if t == f:
        em.goto(t)
        return
    em.line(f"if {em.val(cond)}:")
    em.indent += 1
    em.goto(t)
    em.indent -= 1
    em.line("else:")
    em.indent += 1
    em.goto(f)
    em.indent -= 1


@rule("OpSwitch")
def _switch(em, ins):
    sel, default = ins.operands[0], ins.operands[1]
    s = em.val(sel)
    st = em.value_type(sel)
    mask = (1 << st.width) - 1
    first = True
    for i in range(2, len(ins.operands), 2):
        lit, target = ins.operands[i], ins.operands[i + 1]
        # Compare bit patterns, so that signed selectors match literals given as words.
        em.line(f"{'if' if first else 'elif'} (np.int64({s}) & {mask}) == {lit & mask}:")
        first = False
        em.indent += 1
        em.goto(target)
        em.indent -= 1
    if first:
        em.goto(default)
        return
    em.line("else:")
    em.indent += 1
    em.goto(default)
    em.indent -= 1


@rule("OpReturn", "OpReturnValue", "OpTerminateInvocation", "OpKill")
def _return(em, ins):
    if em.callback is not None:
        # A callback (a function compiled on its own) returns its value to the kernel.
        if ins.opname == "OpReturnValue":
            v = em.vals(ins.operands[0])
            em.line(f"return {v[0] if len(v) == 1 else '(' + ', '.join(v) + ')'}")
        else:
            em.line(f"return {em.zero()}")
        return
    if em.has_collectives:
        em.line("state[lane] = -1")
    em.line("break")


@rule("OpUnreachable")
def _unreachable(em, ins):
    em.line(em.fail(ins, "OpUnreachable was reached"))


@rule("OpPhi")
def _phi(em, ins):
    if ins.result in em.resident:
        return            # a matrix living in its slot rows: the edges copy into them
    t = em.rtype(ins)
    if isinstance(t, Pointer) and ins.result not in em.ptrs:
        from ..emitter import Ptr
        em.ptrs[ins.result] = Ptr("mem", t.pointee, t.storage, addr=f"v{ins.result}", root=None)
    em.phi_names(ins)


@rule("OpNop", "OpLine", "OpNoLine", "OpLifetimeStart", "OpLifetimeStop", "OpMemoryBarrier",
      "OpSelectionMerge", "OpLoopMerge", "OpModuleProcessed", "OpAssumeTrueKHR")
def _nothing(em, ins):
    # OpMemoryBarrier: lanes of a workgroup run one after another on one thread and workgroups
    # share memory coherently, so there is nothing to order.
    pass
