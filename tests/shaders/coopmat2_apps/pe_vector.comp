#version 450
// A per-element operation whose Func takes every kind of operand: the element, a second matrix's
// element, a push constant and a per-invocation value, and reads a buffer at (row, column).
// ELU: the elements of a row take one branch or the other, or part ways (the data decides).
// Two subgroups, each its own 16 x 16 matrix from a[sg * 256], the second operand from
// a[512 + sg * 256], the bias from bias[sg * 256 + row * 16 + column]. Then a row reduction of a
// third matrix (a[1024 + sg * 256]) by a combine function whose branch the rows take apart or
// together, written to red[sg * 256].
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 64) in;
layout(push_constant) uniform P { float s; } p;
layout(set = 0, binding = 0) readonly buffer BA { float a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float bias[]; };
layout(set = 0, binding = 2) writeonly buffer BO { float o[]; };
layout(set = 0, binding = 3) writeonly buffer BR { float red[]; };
#define M coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

float elu(const in uint row, const in uint col, const in float x, const in float y, const in float s,
          const in uint off) {
    float v = x * s + bias[off + row * 16 + col] + y;
    if (v > 0.0)
        return v;
    return exp(v) - 1.0;
}

float pick(const in float a, const in float b) {
    if (a > b)
        return a - b * 0.5;
    return b + a * 0.25;
}

void main() {
    uint off = gl_SubgroupID * 256;
    M m, y, r;
    coopMatLoad(m, a, off, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(y, a, 512 + off, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatPerElementNV(r, m, elu, y, p.s, off);
    coopMatStore(r, o, off, 16, gl_CooperativeMatrixLayoutRowMajor);
    M z, zr;
    coopMatLoad(z, a, 1024 + off, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatReduceNV(zr, z, gl_CooperativeMatrixReduceRowNV, pick);
    coopMatStore(zr, red, off, 16, gl_CooperativeMatrixLayoutRowMajor);
}
