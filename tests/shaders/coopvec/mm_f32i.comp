#version 460
#extension GL_GOOGLE_include_directive : require
// float32 vectors quantized to 8-bit integers (round to nearest even, saturating), int32 results
#define IN_T float
#define ISZ 4
#define OUT_T int32_t
#define OSZ 4
#define KIN K
#define NVAR 2
#define CASES \
  case 0: MMA(gl_ComponentTypeSignedInt8NV, gl_ComponentTypeSignedInt8NV, gl_ComponentTypeSignedInt32NV, RM, false); break; \
  case 1: MMA(gl_ComponentTypeUnsignedInt8NV, gl_ComponentTypeUnsignedInt8NV, gl_ComponentTypeSignedInt32NV, RM, false); break;
#include "common.glsl"
