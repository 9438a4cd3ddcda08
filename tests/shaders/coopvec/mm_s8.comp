#version 460
#extension GL_GOOGLE_include_directive : require
// int8 vectors, int32 results; float32 vectors quantized to int8 are in mm_f32i
#define IN_T int8_t
#define ISZ 1
#define OUT_T int32_t
#define OSZ 4
#define KIN K
#define NVAR 3
#define CASES \
  case 0: MMA(gl_ComponentTypeSignedInt8NV, gl_ComponentTypeSignedInt8NV, gl_ComponentTypeSignedInt32NV, RM, false); break; \
  case 1: MMA(gl_ComponentTypeSignedInt8NV, gl_ComponentTypeUnsignedInt8NV, gl_ComponentTypeSignedInt32NV, RM, false); break; \
  case 2: MMA(gl_ComponentTypeUnsignedInt8NV, gl_ComponentTypeSignedInt8NV, gl_ComponentTypeSignedInt32NV, RM, false); break;
#include "common.glsl"
