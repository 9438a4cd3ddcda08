#!/bin/sh
# Rebuild the production-style quantized matmul (the .spv are committed; tests never run this):
# mul_mm_q.spv as glslang writes it, mul_mm_q_O.spv through spirv-opt -O (the one the tests and
# the compile benchmark use). glslang 16 and SPIRV-Tools 2026: ../../../../shared/tools/get-glslang.
set -e
cd "$(dirname "$0")"
B=${GLSLANG_BIN:-$(../../../../shared/tools/get-glslang | tail -n 1)/bin}
$B/glslang -V --target-env vulkan1.3 mul_mm_q.comp -o mul_mm_q.spv >/dev/null
$B/spirv-opt --target-env=vulkan1.3 -O mul_mm_q.spv -o mul_mm_q_O.spv
$B/spirv-val --target-env vulkan1.3 mul_mm_q_O.spv
