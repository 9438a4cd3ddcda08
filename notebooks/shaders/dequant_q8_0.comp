#version 460
// Dequantize a Q8_0 matrix (ggml's block format: 32 weights per block, a float16 scale d and 32
// signed bytes q; value = q * d) through a cooperative matrix tensor load with a DecodeFunc. An
// R x C matrix (C a multiple of 32) is R x C/32 blocks, row after row. Each workgroup (one
// subgroup of 32) decodes one 16 x 32 tile and stores it, row-major, into `weights`; dispatch
// (C / 32, R / 16).
//   glslang -V --target-env vulkan1.3 dequant_q8_0.comp -o dequant_q8_0.spv
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_buffer_reference : require

layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer Quantized { uint8_t blocks[]; };
layout(std430, binding = 1) writeonly buffer Out { float weights[]; };
layout(push_constant) uniform Shape { uint rows, cols; } shape;
layout(buffer_reference, std430, buffer_reference_align = 2) buffer BlockQ8_0 {
    float16_t d;
    int8_t qs[32];
};

float decode(const in BlockQ8_0 b, const in uint32_t block_coord[2], const in uint32_t in_block[2]) {
    return float(b.qs[in_block[1]]) * float(b.d);
}

void main() {
    uint row = gl_WorkGroupID.y * 16, col = gl_WorkGroupID.x * 32;
    tensorLayoutNV<2> t = createTensorLayoutNV(2);
    t = setTensorLayoutBlockSizeNV(t, 1, 32);
    t = setTensorLayoutDimensionNV(t, shape.rows, shape.cols);
    t = sliceTensorLayoutNV(t, row, 16, col, 32);
    coopmat<float, gl_ScopeSubgroup, 16, 32, gl_MatrixUseAccumulator> m;
    coopMatLoadTensorNV(m, blocks, 0, t, decode);
    coopMatStore(m, weights, row * shape.cols + col, shape.cols, gl_CooperativeMatrixLayoutRowMajor);
}
