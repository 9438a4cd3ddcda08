#version 460
// MUL_MAT_ID in the style of llama.cpp's mul_mm_cm2 with MUL_MAT_ID: each token is routed to one
// expert; workgroup (x, y, z) multiplies up to BM tokens routed to expert z by a BN-column slice of
// that expert's weights. The token rows of A are gathered by a decode function that reads the
// row ids staged in shared memory, and the result tile is scattered to the tokens' output rows by
// a per-element operation that writes the output buffer (and drops rows past the expert's token
// count and columns past N).
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_EXT_buffer_reference : enable

layout(local_size_x = 128) in;
const uint BM = 32;
const uint BN = 32;
const uint BK = 16;

layout(push_constant) uniform P { uint T; uint N; uint K; } p;

layout(set = 0, binding = 0) readonly buffer Ab { float16_t data_a[]; };    // T x K
layout(set = 0, binding = 1) readonly buffer Bb { float16_t data_b[]; };    // E x N x K
layout(set = 0, binding = 2) readonly buffer Ib { uint ids[]; };            // E x T: routed tokens
layout(set = 0, binding = 3) readonly buffer Cb { uint counts[]; };         // E
layout(set = 0, binding = 4) buffer Db { float data_d[]; };                 // T x N

layout(buffer_reference, std430, buffer_reference_align = 2) buffer decodeBufA { float16_t v; };

shared uint sh_rows[BM];
shared uint sh_count;

float16_t gatherA(const in decodeBufA bl, const in uint bc[2], const in uint cib[2]) {
    return data_a[sh_rows[bc[0]] * p.K + bc[1]];
}

float scatter(const in uint r, const in uint c, const in float e, const in uint n0) {
    if (r < sh_count && n0 + c < p.N) {
        data_d[sh_rows[r] * p.N + n0 + c] = e;
    }
    return e;
}

void main() {
    const uint ex = gl_WorkGroupID.z;
    const uint r0 = gl_WorkGroupID.x * BM;
    const uint n0 = gl_WorkGroupID.y * BN;
    const uint count = counts[ex];
    if (r0 >= count) {
        return;                                  // the whole workgroup: nothing routed here
    }
    for (uint i = gl_LocalInvocationIndex; i < BM; i += gl_WorkGroupSize.x) {
        sh_rows[i] = r0 + i < count ? ids[ex * p.T + r0 + i] : 0;
    }
    if (gl_LocalInvocationIndex == 0) {
        sh_count = count - r0;
    }
    barrier();

    tensorLayoutNV<2> tA = createTensorLayoutNV(2);
    tA = setTensorLayoutDimensionNV(tA, BM, p.K);
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tB =
        createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tB = setTensorLayoutDimensionNV(tB, (ex + 1) * p.N, p.K);
    tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);

    coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(0.0);
    for (uint k = 0; k < p.K; k += BK) {
        coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> a;
        coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> b;
        coopMatLoadTensorNV(a, data_a, 0, sliceTensorLayoutNV(tA, 0, BM, k, BK), gatherA);
        coopMatLoadTensorNV(b, data_b, 0, sliceTensorLayoutNV(tB, ex * p.N + n0, BN, k, BK), transposed);
        acc = coopMatMulAdd(a, b, acc);
    }
    coopMatPerElementNV(acc, acc, scatter, n0);
}
