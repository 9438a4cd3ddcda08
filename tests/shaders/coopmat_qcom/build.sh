#!/bin/sh
# Rebuild the SPV_QCOM_cooperative_matrix_conversion test shaders (the .spv are committed; tests
# never run this). glslang 16: ../../../../shared/tools/get-glslang (or set GLSLANG).
set -e
cd "$(dirname "$0")"
G=${GLSLANG:-/root/.cache/glslang16/bin/glslang}
V="-V --target-env vulkan1.3 -S comp"

# convert.comp: name, A/B component type, accumulator type, K (one 256-bit row), N, N / packed
# accumulator length
convert() {
    $G $V -DET=$2 -DCT=$3 -DKDIM=$4 -DNDIM=$5 -DACC_DIV=$6 convert.comp -o convert_$1.spv >/dev/null
}
convert f16 float16_t float16_t 16 32 2
convert f32 float float 8 64 1
convert s8 int8_t int32_t 32 16 1
convert u8 uint8_t uint32_t 32 32 1

$G $V -DPOSITION_BEFORE_LOOP conv.comp -o conv_outer.spv >/dev/null
for s in arrays bad conv mlp dequant ldbits; do
    $G $V $s.comp -o $s.spv >/dev/null
done
$G $V -DCOLUMN_MAJOR ldbits.comp -o ldbits_col.spv >/dev/null
