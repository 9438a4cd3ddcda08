"""Analyses of one specialized entry point, each in its own module with its inputs and results in
its signature. The code generator (jitcoop.codegen) runs them in this order:

    lanes        (on the module, first) whether any instruction looks into a
                 lane's fragment; if none, matrices take the striped layout   -> reason or None
    flatten      calls inlined, blocks split at collective instructions      -> FlatFunction
    prune        (during flatten) dead arms of branches on constants removed
    private      (during flatten) Private variables no callback reaches made
                 Function variables of the flat function (private to local)
    ssa          (during flatten) Function variables never addressed
                 indirectly become SSA values with phis (mem2reg)
    unroll       (during flatten) short counted loops around cooperative
                 instructions unrolled, the counter a constant per copy
    sroa         (during flatten) whole-array copies of matrices (inout array
                 parameters, initializers) taken apart, then arrays of matrices
                 indexed by constants split into one variable per element
    simplify     (during flatten) straight chains of blocks merged
    cfg          predecessors, dominators, frontiers, natural loops: the
                 graph facts the passes above share
    variables    bindings, push constants, workgroup, Private and Function
                 variables; which variables become registers              -> Variables
    callbacks    SPIR-V functions cooperative instructions call per element -> {fid: CallbackInfo}
    invariance   whether the invocations of a workgroup can differ at all;
                 if not, one invocation's code runs per workgroup         -> reasons they vary
    matrices     cooperative matrices living in slot rows, and which values
                 share rows (phis and variables coalesced)                  -> Residency
    uniform      values computed once per workgroup                         -> set of ids
    loops        loops that cannot spin (bounded trip counts): no cancel
                 check on their back edges                                -> set of headers
    bitmoves     small-float loads that only move bits                      -> set of ids
    liveness     values live across collective points (spill slots)         -> live-in sets
    order        structured block order: which collective the scheduler
                 runs first when lanes wait at several                      -> {label: position}
"""
