#!/bin/sh
# Rebuild the .spv files (glslang 16: ../shared/tools/get-glslang prints where it is).
cd "$(dirname "$0")"
G=${GLSLANG:-glslang}
$G -V --target-env vulkan1.3 q4_gemm.comp -o q4_gemm.spv
${SPIRV_OPT:-spirv-opt} -O q4_gemm.spv -o q4_gemm_O.spv
$G -V --target-env vulkan1.3 -DSHARED_SCALES q4_gemm.comp -o q4_gemm_shared.spv
$G -V --target-env vulkan1.3 flash_attn.comp -o flash_attn.spv
$G -V --target-env vulkan1.3 ops.comp -o ops.spv
$G -V --target-env vulkan1.3 decode_private.comp -o decode_private.spv
sed 's/    scale_mul = 2.0;/    scale_mul = gl_LocalInvocationID.x == 5 ? 3.0 : 2.0;/' decode_private.comp > /tmp/decode_private_bad.comp
$G -V --target-env vulkan1.3 /tmp/decode_private_bad.comp -o decode_private_bad.spv
$G -V --target-env vulkan1.3 mul_mat_id.comp -o mul_mat_id.spv
$G -V --target-env vulkan1.3 -DDECODE_VEC q4_gemm.comp -o q4_gemm_vec.spv
$G -V --target-env vulkan1.3 pe_vector.comp -o pe_vector.spv
