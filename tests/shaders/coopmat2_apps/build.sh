#!/bin/sh
# Rebuild the .spv files (glslang 16: ../shared/tools/get-glslang prints where it is).
cd "$(dirname "$0")"
G=${GLSLANG:-glslang}
$G -V --target-env vulkan1.3 q4_gemm.comp -o q4_gemm.spv
$G -V --target-env vulkan1.3 -DSHARED_SCALES q4_gemm.comp -o q4_gemm_shared.spv
