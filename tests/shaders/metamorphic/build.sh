#!/bin/sh
# Rebuild the reproducers of tests/test_metamorphic.py (the .spv are committed; tests never run
# this). glslang 16 and SPIRV-Tools 2026: ../../../../shared/tools/get-glslang.
set -e
cd "$(dirname "$0")"
B=${GLSLANG_BIN:-$(../../../../shared/tools/get-glslang | tail -n 1)/bin}
# debug information, then any spirv-opt pass: DebugNoScope after each function's OpReturn
$B/glslang -V -gVS --target-env vulkan1.3 debug_scope.comp -o debug_scope.spv >/dev/null
$B/spirv-opt --target-env=vulkan1.3 --eliminate-dead-branches debug_scope.spv -o debug_scope.opt.spv
# a boolean phi in code a specialization constant makes dead
$B/glslang -V --target-env vulkan1.3 spec_dead_phi.comp -o spec_dead_phi.spv >/dev/null
# subgroup reconvergence after a loop, and the same module with the loop's merge block placed
# right after the block that leaves the loop (before the loop body)
$B/glslang -V --target-env vulkan1.3 reconverge.comp -o reconverge.spv >/dev/null
(cd ../../.. && python3 - <<'PY'
from tests.metamorphic.ir import Module
d = "tests/shaders/metamorphic/"
m = Module(open(d + "reconverge.spv", "rb").read())
f = m.functions[0]
merge = next(b.merge.words[1] for b in f.blocks if b.merge is not None and b.merge.opname == "OpLoopMerge")
bm = f.block_map()
exit_block = next(b for b in f.blocks if b.term.opname == "OpBranchConditional" and merge in b.successors())
f.blocks.remove(bm[merge])
f.blocks.insert(f.blocks.index(exit_block) + 1, bm[merge])
open(d + "reconverge_order.spv", "wb").write(m.emit())
PY
)
# two tensor loads with one constant matrix as their Object (what spirv-opt -O makes of them)
$B/glslang -V --target-env vulkan1.3 const_object.comp -o const_object.spv >/dev/null
$B/spirv-opt --target-env=vulkan1.3 -O const_object.spv -o const_object_O.spv
