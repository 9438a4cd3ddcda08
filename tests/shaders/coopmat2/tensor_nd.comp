#version 450
// Tensor-addressed loads and stores of a 16x32 uint matrix with every layout and view parameter read
// at run time from p[], so that one compiled kernel per (DIM, CLAMP) serves every random layout.
// Built with -DDIM=1..5 (tensor_<DIM>d.spv), and -DLITE for tensor_2d_lite.spv (no views).
// The clamp mode is a specialization constant (constant_id 0).
//
// o[] (16x32, row-major) is the Object of a load (loaded first, so clipped elements keep it) and
// receives the result; for a store it is the matrix stored.  a[] is the tensor, Pointer = &a[base].
// p[0]: site  0 load, 1 load with view v1, 2 load with view v3, 3 store, 4 store v1, 5 store v3
// p[1]: flags 1 SetStride, 2 SetBlockSize again after SetDimension, 4 a Slice before SetDimension
//       (which SetDimension wipes), 8 SetClip on the views
// p[2] clamp value, p[4] base element, p[5] base increment per workgroup (x)
// then five-entry groups (only the first DIM, or VD for v3, are used).
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
layout(local_size_x = 32) in;
layout(constant_id = 0) const uint CLAMP = 0;
layout(set=0, binding=0) buffer T { uint a[]; };
layout(set=0, binding=1) buffer O { uint o[]; };
layout(set=0, binding=2) readonly buffer P { uint p[]; };
const uint M = 16, N = 32;
const uint BS = 8, DIMS = 13, STR = 18, OFF1 = 23, SPAN1 = 28, OFF2 = 33, SPAN2 = 38, BS2 = 43,
           JUNK = 48, VDIM = 53, VSTR = 58, CLIP = 63;
// L: one argument per layout dimension; S: (offset, span) pairs; V1P: permutation of v1
// (hasDimensions false, DIM dimensions); V3T: type arguments of v3 (hasDimensions true); VL: its values.
#if DIM == 1
#define L(b) p[b]
#define S(o, s) p[o], p[s]
#define V1P 0
#define V3T 2, true, 1, 0
#define VL(b) p[b], p[b+1]
#elif DIM == 2
#define L(b) p[b], p[b+1]
#define S(o, s) p[o], p[s], p[o+1], p[s+1]
#define V1P 1, 0
#define V3T 3, true, 2, 0, 1
#define VL(b) p[b], p[b+1], p[b+2]
#elif DIM == 3
#define L(b) p[b], p[b+1], p[b+2]
#define S(o, s) p[o], p[s], p[o+1], p[s+1], p[o+2], p[s+2]
#define V1P 1, 2, 0
#define V3T 5, true, 1, 3, 0, 4, 2
#define VL(b) p[b], p[b+1], p[b+2], p[b+3], p[b+4]
#elif DIM == 4
#define L(b) p[b], p[b+1], p[b+2], p[b+3]
#define S(o, s) p[o], p[s], p[o+1], p[s+1], p[o+2], p[s+2], p[o+3], p[s+3]
#define V1P 2, 0, 3, 1
#define V3T 1, true, 0
#define VL(b) p[b]
#else
#define L(b) p[b], p[b+1], p[b+2], p[b+3], p[b+4]
#define S(o, s) p[o], p[s], p[o+1], p[s+1], p[o+2], p[s+2], p[o+3], p[s+3], p[o+4], p[s+4]
#define V1P 4, 2, 0, 1, 3
#define V3T 4, true, 3, 1, 2, 0
#define VL(b) p[b], p[b+1], p[b+2], p[b+3]
#endif

void main() {
    uint site = p[0], flags = p[1];
    tensorLayoutNV<DIM, CLAMP> t = createTensorLayoutNV(DIM, CLAMP);
    t = setTensorLayoutBlockSizeNV(t, L(BS));
    if ((flags & 4) != 0) t = sliceTensorLayoutNV(t, S(JUNK, JUNK));
    t = setTensorLayoutDimensionNV(t, L(DIMS));
    if ((flags & 2) != 0) t = setTensorLayoutBlockSizeNV(t, L(BS2));
    if ((flags & 1) != 0) t = setTensorLayoutStrideNV(t, L(STR));
    t = sliceTensorLayoutNV(t, S(OFF1, SPAN1));
    t = sliceTensorLayoutNV(t, S(OFF2, SPAN2));
    t = setTensorLayoutClampValueNV(t, p[2]);
    coopmat<uint, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator> m;
    coopMatLoad(m, o, 0, N, gl_CooperativeMatrixLayoutRowMajor);
    uint base = p[4] + gl_WorkGroupID.x * p[5];
#ifdef LITE
    if (site == 0) {
        coopMatLoadTensorNV(m, a, base, t);
        coopMatStore(m, o, 0, N, gl_CooperativeMatrixLayoutRowMajor);
    } else {
        coopMatStoreTensorNV(m, a, base, t);
    }
#else
    tensorViewNV<DIM, false, V1P> v1 = createTensorViewNV(DIM, false, V1P);
    tensorViewNV<V3T> v3 = createTensorViewNV(V3T);
    v3 = setTensorViewDimensionsNV(v3, VL(VDIM));
    v3 = setTensorViewStrideNV(v3, VL(VSTR));
    if ((flags & 8) != 0) {
        v1 = setTensorViewClipNV(v1, p[CLIP], p[CLIP+1], p[CLIP+2], p[CLIP+3]);
        v3 = setTensorViewClipNV(v3, p[CLIP], p[CLIP+1], p[CLIP+2], p[CLIP+3]);
    }
    if (site < 3) {
        if (site == 0) coopMatLoadTensorNV(m, a, base, t);
        else if (site == 1) coopMatLoadTensorNV(m, a, base, t, v1);
        else coopMatLoadTensorNV(m, a, base, t, v3);
        coopMatStore(m, o, 0, N, gl_CooperativeMatrixLayoutRowMajor);
    } else {
        if (site == 3) coopMatStoreTensorNV(m, a, base, t);
        else if (site == 4) coopMatStoreTensorNV(m, a, base, t, v1);
        else coopMatStoreTensorNV(m, a, base, t, v3);
    }
#endif
}
