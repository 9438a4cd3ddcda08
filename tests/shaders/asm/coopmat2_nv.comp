#version 460
// Test data for tests/test_asm.py, compiled with glslang 16.6:
//   glslang -V --target-env vulkan1.3 coopmat2_nv.comp -o coopmat2_nv.spv
// NV cooperative matrix 2: tensor layouts and views, decode functions (scalar and vector),
// reductions, per-element operations, transpose and use conversion.
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_NV_cooperative_matrix_decode_vector : require
#extension GL_EXT_buffer_reference : require

layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer Src { uint8_t q[]; };
layout(std430, binding = 1) buffer Dst { float16_t o[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Packed { uint32_t w; };

float16_t dequant(const in Packed p, const in uint32_t blk[2], const in uint32_t inblk[2]) {
    return float16_t(float((p.w >> (8u * (inblk[1] & 3u))) & 0xFFu) - 128.0) * float16_t(0.25);
}

f16vec4 dequant4(const in Packed p, const in uint32_t blk[2], const in uint32_t inblk[2]) {
    uvec4 b = (uvec4(p.w) >> uvec4(0u, 8u, 16u, 24u)) & 0xFFu;
    return f16vec4((vec4(b) - 128.0) * 0.25);
}

float16_t largest(const in float16_t a, const in float16_t b) { return max(a, b); }

float16_t scaleRow(const in uint32_t row, const in uint32_t col, const in float16_t x, const in float16_t s) {
    return row == col ? x * s : x;
}

void main() {
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> t =
        createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    t = setTensorLayoutBlockSizeNV(t, 1, 4);
    t = setTensorLayoutDimensionNV(t, 64, 64);
    t = setTensorLayoutStrideNV(t, 64, 1);
    t = sliceTensorLayoutNV(t, 16, 16, 0, 16);
    t = setTensorLayoutClampValueNV(t, 0x3C00);

    tensorViewNV<2, false, 1, 0> v = createTensorViewNV(2, false, 1, 0);
    v = setTensorViewDimensionsNV(v, 16, 16);
    v = setTensorViewClipNV(v, 0, 16, 0, 8);

    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
    coopMatLoadTensorNV(m, q, 0, t, dequant, dequant4);
    coopMatLoadTensorNV(m, q, 0, t, v, dequant);

    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> r;
    coopMatReduceNV(r, m, gl_CooperativeMatrixReduceRowNV | gl_CooperativeMatrixReduceColumnNV, largest);
    coopMatPerElementNV(r, r, scaleRow, float16_t(0.5));

    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> b;
    coopMatTransposeNV(b, r);
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a =
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>(r);
    m = coopMatMulAdd(a, b, m);

    tensorLayoutNV<2> ts = createTensorLayoutNV(2);
    ts = setTensorLayoutDimensionNV(ts, 64, 64);
    coopMatStoreTensorNV(m, o, 0, ts);
}
