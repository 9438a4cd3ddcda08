#version 460
#extension GL_GOOGLE_include_directive : require
// uint32 vectors, int32 results: packed 8-bit inputs, saturating conversions, wrapping
#define IN_T uint32_t
#define ISZ 4
#define OUT_T int32_t
#define OSZ 4
#define KIN K
#define NVAR 6
#define CASES \
  case 0: MMA(gl_ComponentTypeSignedInt8PackedNV, gl_ComponentTypeSignedInt8NV, gl_ComponentTypeSignedInt32NV, RM, false); break; \
  case 1: MMA(gl_ComponentTypeUnsignedInt8PackedNV, gl_ComponentTypeUnsignedInt8NV, gl_ComponentTypeSignedInt32NV, CM, false); break; \
  case 2: MMA(gl_ComponentTypeUnsignedInt8NV, gl_ComponentTypeSignedInt8NV, gl_ComponentTypeSignedInt32NV, RM, false); break; \
  case 3: MMA(gl_ComponentTypeSignedInt8NV, gl_ComponentTypeUnsignedInt8NV, gl_ComponentTypeSignedInt32NV, RM, false); break; \
  case 4: MMA(gl_ComponentTypeUnsignedInt32NV, gl_ComponentTypeUnsignedInt32NV, gl_ComponentTypeUnsignedInt32NV, RM, false); break; \
  case 5: MMA(gl_ComponentTypeSignedInt16NV, gl_ComponentTypeSignedInt64NV, gl_ComponentTypeSignedInt32NV, CM, false); break;
#include "common.glsl"
