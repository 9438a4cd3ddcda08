#!/bin/sh
# Rebuild the benchmark shaders with glslang 16 and spirv-opt: GLSLANG and SPIRV_OPT if set, else
# the ones ../shared/tools/get-glslang installs (it prints where), else glslang and spirv-opt on PATH.
set -e
cd "$(dirname "$0")"
get=../../../shared/tools/get-glslang
if [ -z "$GLSLANG" ] && [ -x "$get" ]; then
    bin=$("$get" | tail -1)/bin
    GLSLANG=$bin/glslang
    SPIRV_OPT=${SPIRV_OPT:-$bin/spirv-opt}
fi
G="${GLSLANG:-glslang} -V --target-env vulkan1.3"
O=${SPIRV_OPT:-spirv-opt}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

$G -S comp -DATYPE=float16_t -DACC=float -DKSTEP=16 gemm_coopmat.comp -o $tmp/g16.spv
$O -O $tmp/g16.spv -o gemm_coopmat_f16.spv
$G -S comp -DATYPE=int8_t -DACC=int32_t -DKSTEP=32 gemm_coopmat.comp -o $tmp/gs8.spv
$O -O $tmp/gs8.spv -o gemm_coopmat_s8.spv
$G muladd_loop.comp -o $tmp/ml.spv
$O -O $tmp/ml.spv -o muladd_loop.spv
$G gemm_coopmat_wg.comp -o $tmp/gwg.spv
$O -O $tmp/gwg.spv -o gemm_coopmat_wg.spv

# The style corpus (benchmarks/corpus.py): glslang's own output, and spirv-opt -O of two sources.
cd corpus
$G -DT=16 plain.comp -o plain_16.spv
$O -O plain_16.spv -o plain_16_O.spv
$G -DT=8 plain.comp -o plain_8.spv
$G -DT=16 f16acc.comp -o f16acc.spv
for s in arrays_uvec4 unrolled_u32 bias_act wg_arrays wg_tensor q4_n64 flash_attn fn_helper global_acc struct_acc row_1x4 dbuf wg_direct sg_tensor guarded fp8; do
    $G $s.comp -o $s.spv
done
$O -O wg_tensor.spv -o wg_tensor_O.spv
