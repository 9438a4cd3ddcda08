"""Core control flow: branches, switches, returns, phis and the instructions that emit nothing.

SPIR-V's control-flow graph is LLVM's: every SPIR-V block is one LLVM block (`%b<label>`); an
edge that carries phi values or is a loop's back edge goes through a block of its own
(KernelGen.edge) that does the edge's work.
"""
from __future__ import annotations

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
    c = em.val(cond)
    em.emit(f"br i1 {c}, label %{em.edge(t)}, label %{em.edge(f)}")
    em.flush_edges()


@rule("OpSwitch")
def _switch(em, ins):
    sel, default = ins.operands[0], ins.operands[1]
    st = em.value_type(sel)
    s = em.val(sel)
    t = f"i{st.width}"
    cases = []
    seen = set()
    for i in range(2, len(ins.operands), 2):
        lit, target = ins.operands[i], ins.operands[i + 1]
        # literals are words: compare bit patterns, so that signed selectors match
        v = lit & ((1 << st.width) - 1)
        if v in seen:
            continue
        seen.add(v)
        cases.append(f"{t} {v}, label %{em.edge(target)}")
    em.emit(f"switch {t} {s}, label %{em.edge(default)} [ {' '.join(cases)} ]")
    em.flush_edges()


@rule("OpReturn", "OpReturnValue", "OpTerminateInvocation", "OpKill")
def _return(em, ins):
    if em.callback is not None:
        em.callback_return(ins)
        return
    if em.has_collectives:
        em.emit(f"store i32 -1, ptr {em.st_ptr}")
    em.fn.br("lane.latch")


@rule("OpUnreachable")
def _unreachable(em, ins):
    em.fail(ins, "OpUnreachable was reached")
    em.emit("unreachable")


@rule("OpPhi")
def _phi(em, ins):
    pass          # made when the block starts (KernelGen._prepare_phis), filled by the edges


@rule("OpNop", "OpLine", "OpNoLine", "OpLifetimeStart", "OpLifetimeStop", "OpMemoryBarrier",
      "OpSelectionMerge", "OpLoopMerge", "OpModuleProcessed", "OpAssumeTrueKHR")
def _nothing(em, ins):
    # OpMemoryBarrier: lanes of a workgroup run one after another on one thread and workgroups
    # share memory coherently, so there is nothing to order.
    pass
