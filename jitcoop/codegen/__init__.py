"""The code generator: a specialized entry point -> LLVM IR text (jitcoop.codegen.emitter), with
one lowering rule per instruction in jitcoop.codegen.rules, grouped by the extension that defines
it."""
