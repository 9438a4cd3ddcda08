#version 450
// OpCompositeConstructCoopMatQCOM and OpCompositeExtractCoopMatQCOM for the three Uses of one
// type family: A (M x K) and B (K x N) of component type ET, an accumulator (M x N) of CT, each
// built from arrays of its own component type and from packed uint32 arrays. K is one 256-bit
// row (KDIM), N is NDIM (a build macro: a spec constant would not resize the buffer structs) and
// PACC the packed accumulator length (N / 2 for float16, N otherwise).
// Every subgroup q of the dispatch builds its own matrices from its invocations' arrays:
//   o*  the matrices, stored row major (A, B, packed A, packed B; C, packed C), per subgroup
//   r*  each invocation's arrays extracted again from those matrices (a round trip)
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_QCOM_cooperative_matrix_conversion : require
layout(local_size_x_id = 10) in;
layout(constant_id = 0) const uint M = 64;
const uint N = NDIM;
const uint K = KDIM;
const uint PACC = N / ACC_DIV;
#define RM gl_CooperativeMatrixLayoutRowMajor
struct AB { ET a[K]; ET b[K]; };
struct Cl { CT v[N]; };
struct Packed { uint a[8]; uint b[8]; uint c[PACC]; };
layout(set = 0, binding = 0) readonly buffer B0 { AB iab[]; };        // per invocation
layout(set = 0, binding = 1) readonly buffer B1 { Cl ic[]; };
layout(set = 0, binding = 2) readonly buffer B2 { Packed ip[]; };
layout(set = 0, binding = 3) writeonly buffer B3 { ET oab[]; };       // per subgroup
layout(set = 0, binding = 4) writeonly buffer B4 { CT oc[]; };
layout(set = 0, binding = 5) writeonly buffer B5 { AB rab[]; };       // per invocation
layout(set = 0, binding = 6) writeonly buffer B6 { Cl rc[]; };
layout(set = 0, binding = 7) writeonly buffer B7 { Packed rp[]; };
void main() {
    uint q = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
    uint gi = q * gl_SubgroupSize + gl_SubgroupInvocationID;
    uint ob = q * 2 * (M * K + K * N);

    coopmat<ET, gl_ScopeSubgroup, M, K, gl_MatrixUseA> a;
    coopmat<ET, gl_ScopeSubgroup, K, N, gl_MatrixUseB> b;
    coopmat<CT, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator> c;

    vectorToCoopmatQCOM(iab[gi].a, a);
    coopMatStore(a, oab, ob, K, RM);
    coopmatToVectorQCOM(a, rab[gi].a);
    vectorToCoopmatQCOM(iab[gi].b, b);
    coopMatStore(b, oab, ob + M * K, N, RM);
    coopmatToVectorQCOM(b, rab[gi].b);
    vectorToCoopmatQCOM(ic[gi].v, c);
    coopMatStore(c, oc, q * 2 * M * N, N, RM);
    coopmatToVectorQCOM(c, rc[gi].v);

    vectorToCoopmatQCOM(ip[gi].a, a);
    coopMatStore(a, oab, ob + M * K + K * N, K, RM);
    coopmatToVectorQCOM(a, rp[gi].a);
    vectorToCoopmatQCOM(ip[gi].b, b);
    coopMatStore(b, oab, ob + 2 * M * K + K * N, N, RM);
    coopmatToVectorQCOM(b, rp[gi].b);
    vectorToCoopmatQCOM(ip[gi].c, c);
    coopMatStore(c, oc, q * 2 * M * N + M * N, N, RM);
    coopmatToVectorQCOM(c, rp[gi].c);
}
