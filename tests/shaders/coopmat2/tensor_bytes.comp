#version 450
// Tensor loads whose Pointer is a byte array (uint8_t[]) holding float16 / float32 / uint16 /
// uint8 data at a byte offset, with Constant clamping (the clamp value's low bits are the element).
// p[0]: site 0 f16, 1 f32, 2 u16, 3 u8; p[1] byte offset of the Pointer (a multiple of 16);
// p[2], p[3] layout dimensions; p[4..7] slice (offset, span, offset, span); p[8] clamp value.
// The loaded 16x32 matrix is stored row-major to o16 / o32 / o16 (as uint16) / o8.
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
layout(local_size_x = 32) in;
layout(set=0, binding=0) readonly buffer B { uint8_t bytes[]; };
layout(set=0, binding=1) buffer O16 { float16_t o16[]; };
layout(set=0, binding=2) buffer O32 { float o32[]; };
layout(set=0, binding=3) buffer OU16 { uint16_t ou16[]; };
layout(set=0, binding=4) buffer OU8 { uint8_t ou8[]; };
layout(set=0, binding=5) readonly buffer P { uint p[]; };
const uint M = 16, N = 32;
void main() {
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> t =
        createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    t = setTensorLayoutDimensionNV(t, p[2], p[3]);
    t = sliceTensorLayoutNV(t, p[4], p[5], p[6], p[7]);
    t = setTensorLayoutClampValueNV(t, p[8]);
    uint site = p[0], at = p[1];
    if (site == 0) {
        coopmat<float16_t, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator> m;
        coopMatLoadTensorNV(m, bytes, at, t);
        coopMatStore(m, o16, 0, N, gl_CooperativeMatrixLayoutRowMajor);
    } else if (site == 1) {
        coopmat<float, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator> m;
        coopMatLoadTensorNV(m, bytes, at, t);
        coopMatStore(m, o32, 0, N, gl_CooperativeMatrixLayoutRowMajor);
    } else if (site == 2) {
        coopmat<uint16_t, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator> m;
        coopMatLoadTensorNV(m, bytes, at, t);
        coopMatStore(m, ou16, 0, N, gl_CooperativeMatrixLayoutRowMajor);
    } else {
        coopmat<uint8_t, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator> m;
        coopMatLoadTensorNV(m, bytes, at, t);
        coopMatStore(m, ou8, 0, N, gl_CooperativeMatrixLayoutRowMajor);
    }
}
