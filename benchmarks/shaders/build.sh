#!/bin/sh
# Rebuild the benchmark shaders (glslang 16 + spirv-opt -O: ../shared/tools/get-glslang).
set -e
G=${GLSLANG:-glslang}; O=${SPIRV_OPT:-spirv-opt}
cd "$(dirname "$0")"
$G -V --target-env vulkan1.3 -S comp -DATYPE=float16_t -DACC=float -DKSTEP=16 gemm_coopmat.comp -o /tmp/g16.spv
$O -O /tmp/g16.spv -o gemm_coopmat_f16.spv
$G -V --target-env vulkan1.3 -S comp -DATYPE=int8_t -DACC=int32_t -DKSTEP=32 gemm_coopmat.comp -o /tmp/gs8.spv
$O -O /tmp/gs8.spv -o gemm_coopmat_s8.spv
$G -V --target-env vulkan1.3 muladd_loop.comp -o /tmp/ml.spv
$O -O /tmp/ml.spv -o muladd_loop.spv
$G -V --target-env vulkan1.3 gemm_coopmat_wg.comp -o /tmp/gwg.spv
$O -O /tmp/gwg.spv -o gemm_coopmat_wg.spv
