"""The code generator: a specialized entry point -> LLVM IR text (jitcoop.llvmgen.emitter), with
one lowering rule per instruction in jitcoop.llvmgen.rules, grouped by the extension that defines
it."""
