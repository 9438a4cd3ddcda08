#version 450
// Source of store_decode.spv: build.sh adds a DecodeFunc operand to the OpCooperativeMatrixStoreTensorNV
// (GLSL cannot express it; the seed forbids it), giving a module jitcoop must refuse at load time.
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_EXT_buffer_reference : enable
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer T { uint words[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Word { uint w; };
uint dec(const in Word b, const in uint32_t bc[2], const in uint32_t cib[2]) { return b.w + 1u; }
void main() {
    tensorLayoutNV<2> t = createTensorLayoutNV(2);
    t = setTensorLayoutDimensionNV(t, 16, 32);
    coopmat<uint, gl_ScopeSubgroup, 16, 32, gl_MatrixUseAccumulator> m;
    coopMatLoadTensorNV(m, words, 0, t, dec);
    coopMatStoreTensorNV(m, words, 512, t);
}
