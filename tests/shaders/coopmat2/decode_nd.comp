#version 450
// DecodeFunc loads (DIM = 2 or 3): the decode function receives Pointer + index * sizeof(Blk),
// where sizeof(Blk) = 4 * BLK bytes depends on a specialization constant, blockCoord and
// coordInBlock. It reads the block through that pointer, another storage buffer (sel), a
// workgroup array written before a barrier and a Private variable of the calling invocation.
// sel[0] chooses what it returns: 0 the pointer's words, 1 blockCoord, 2 coordInBlock (+ the
// workgroup array and Private variable).
// p[0]: site 0 plain, 1 with view v (hasDimensions true); p[1] element offset of the Pointer;
// p[2] clamp value; p[3] value of the Private variable; then 5-entry groups:
// blockSize, dims, slice offsets, spans, view dims, view strides; clip (4).
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_EXT_buffer_reference : enable
layout(local_size_x = 32) in;
layout(constant_id = 0) const uint CLAMP = 0;
layout(constant_id = 1) const uint BLK = 1;
layout(set=0, binding=0) readonly buffer T { uint words[]; };
layout(set=0, binding=1) buffer O { uint o[]; };
layout(set=0, binding=2) readonly buffer P { uint p[]; };
layout(set=0, binding=3) readonly buffer Sel { uint sel[]; };
layout(set=0, binding=4) readonly buffer W { uint wsrc[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Blk { uint w[BLK]; };
shared uint sh[32];
uint priv = 0;
const uint M = 16, N = 32;
const uint BS = 8, DIMS = 13, OFF = 18, SPAN = 23, VDIM = 28, VSTR = 33, CLIP = 38;
#if DIM == 2
#define L(b) p[b], p[b+1]
#define S(o, s) p[o], p[s], p[o+1], p[s+1]
#define VT 3, true, 1, 2, 0
#define VL(b) p[b], p[b+1], p[b+2]
#else
#define L(b) p[b], p[b+1], p[b+2]
#define S(o, s) p[o], p[s], p[o+1], p[s+1], p[o+2], p[s+2]
#define VT 2, true, 1, 0
#define VL(b) p[b], p[b+1]
#endif

uint dec(const in Blk b, const in uint32_t bc[DIM], const in uint32_t cib[DIM]) {
    uint s = sel[0];
    if (s == 0) return b.w[0] ^ (b.w[BLK - 1] << 5);
    uint r = 0;
    for (int d = 0; d < DIM; d++) r |= (s == 1 ? bc[d] : cib[d]) << (10 * d);
    if (s == 2) r ^= priv ^ sh[(bc[0] * 7u + bc[DIM - 1]) & 31u];
    return r;
}

void main() {
    sh[gl_LocalInvocationID.x] = wsrc[gl_LocalInvocationID.x];
    priv = p[3];
    barrier();
    tensorLayoutNV<DIM, CLAMP> t = createTensorLayoutNV(DIM, CLAMP);
    t = setTensorLayoutBlockSizeNV(t, L(BS));
    t = setTensorLayoutDimensionNV(t, L(DIMS));
    t = sliceTensorLayoutNV(t, S(OFF, SPAN));
    t = setTensorLayoutClampValueNV(t, p[2]);
    tensorViewNV<VT> v = createTensorViewNV(VT);
    v = setTensorViewDimensionsNV(v, VL(VDIM));
    v = setTensorViewStrideNV(v, VL(VSTR));
    v = setTensorViewClipNV(v, p[CLIP], p[CLIP+1], p[CLIP+2], p[CLIP+3]);
    coopmat<uint, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator> m;
    coopMatLoad(m, o, 0, N, gl_CooperativeMatrixLayoutRowMajor);
    if (p[0] == 0) coopMatLoadTensorNV(m, words, p[1], t, dec);
    else coopMatLoadTensorNV(m, words, p[1], t, v, dec);
    coopMatStore(m, o, 0, N, gl_CooperativeMatrixLayoutRowMajor);
}
