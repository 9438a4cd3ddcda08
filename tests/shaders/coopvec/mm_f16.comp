#version 460
#extension GL_GOOGLE_include_directive : require
// float16 vectors: every float interpretation, layouts, transpose, bias or none
#define IN_T float16_t
#define ISZ 2
#define OUT_T float16_t
#define OSZ 2
#define KIN K
#define NVAR 9
#define CASES \
  case 0: MMA(gl_ComponentTypeFloat16NV, gl_ComponentTypeFloat16NV, gl_ComponentTypeFloat16NV, RM, false); break; \
  case 1: MMA(gl_ComponentTypeFloat16NV, gl_ComponentTypeFloat16NV, gl_ComponentTypeFloat16NV, CM, false); break; \
  case 2: MM(gl_ComponentTypeFloat16NV, gl_ComponentTypeFloat16NV, RM, false); break; \
  case 3: MMA(gl_ComponentTypeFloat16NV, gl_ComponentTypeFloat16NV, gl_ComponentTypeFloat16NV, IO, true); break; \
  case 4: MMA(gl_ComponentTypeFloat16NV, gl_ComponentTypeFloat16NV, gl_ComponentTypeFloat16NV, TO, false); break; \
  case 5: MMA(gl_ComponentTypeFloatE4M3NV, gl_ComponentTypeFloatE4M3NV, gl_ComponentTypeFloat16NV, IO, false); break; \
  case 6: MMA(gl_ComponentTypeFloatE5M2NV, gl_ComponentTypeFloatE5M2NV, gl_ComponentTypeFloat16NV, IO, false); break; \
  case 7: MMA(gl_ComponentTypeFloat32NV, gl_ComponentTypeFloat32NV, gl_ComponentTypeFloat32NV, RM, false); break; \
  case 8: MMA(gl_ComponentTypeFloat64NV, gl_ComponentTypeFloat64NV, gl_ComponentTypeFloat64NV, CM, false); break;
#include "common.glsl"
