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
