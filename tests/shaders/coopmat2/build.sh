#!/bin/sh
# Rebuilds the SPIR-V of the coopmat2 tensor-addressing test shaders (glslang 16:
# ../../../../shared/tools/get-glslang; spirv-as for the .spvasm files).
set -e
cd "$(dirname "$0")"
G="${GLSLANG:-glslang} -V --target-env vulkan1.3"
for d in 1 2 3 4 5; do $G -DDIM=$d tensor_nd.comp -o tensor_${d}d.spv; done
$G -DDIM=2 -DLITE tensor_nd.comp -o tensor_2d_lite.spv
$G -DDIM=2 decode_nd.comp -o decode_2d.spv
$G -DDIM=3 decode_nd.comp -o decode_3d.spv
for v in 2 4 8; do $G -DV=$v decode_vec.comp -o decode_vec$v.spv; done
$G tensor_bytes.comp -o tensor_bytes.spv
# store_decode: glslang's module with "DecodeFunc %dec" added to the store (spirv-dis/-as beside glslang)
BIN="$(dirname "$(command -v "${GLSLANG:-glslang}")")"
$G store_decode.comp -o store_decode.tmp.spv
"$BIN/spirv-dis" --raw-id store_decode.tmp.spv -o store_decode.tmp.spvasm
DEC=$(sed -n 's/.*OpCooperativeMatrixLoadTensorNV .* DecodeFunc \(%[0-9]*\).*/\1/p' store_decode.tmp.spvasm)
sed "s/\(OpCooperativeMatrixStoreTensorNV .*\) None None$/\1 None DecodeFunc $DEC/" store_decode.tmp.spvasm > store_decode.spvasm
"$BIN/spirv-as" --target-env vulkan1.3 store_decode.spvasm -o store_decode.spv
rm -f store_decode.tmp.spv store_decode.tmp.spvasm
$G decode_q4.comp -o decode_q4.spv
$G decode_lanes.comp -o decode_lanes.spv
$G decode_vecview.comp -o decode_vecview.spv
# tensor_rows.comp: name element rows cols [extra glslang arguments]
rows() {
    name=$1; e=$2; r=$3; c=$4; shift 4
    $G -DETYPE=$e -DROWS=$r -DCOLS=$c "$@" tensor_rows.comp -o tensor_rows_$name.spv
}
BF16="#extension GL_EXT_bfloat16 : require"
rows f16_16x32 float16_t 16 32
rows f16_16x48 float16_t 16 48
rows f16_8x16 float16_t 8 16
rows bf16_16x32 bfloat16_t 16 32 "-P$BF16"
rows f32_16x16 float 16 16
rows u8_16x64 uint8_t 16 64
rows s32_8x8 int32_t 8 8
rows t_f16_16x32 float16_t 16 32 -DTRANSPOSED
rows t_f16_16x64 float16_t 16 64 -DTRANSPOSED
rows t_f32_16x16 float 16 16 -DTRANSPOSED
rows t_u8_16x64 uint8_t 16 64 -DTRANSPOSED
rows t_bf16_16x32 bfloat16_t 16 32 -DTRANSPOSED "-P$BF16"
