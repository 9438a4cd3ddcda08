#version 460
#extension GL_GOOGLE_include_directive : require
// float32 vectors and results: float16/fp8 input quantization, integer interpretations
#define IN_T float
#define ISZ 4
#define OUT_T float
#define OSZ 4
#define KIN K
#define NVAR 5
#define CASES \
  case 0: MMA(gl_ComponentTypeFloat32NV, gl_ComponentTypeFloat32NV, gl_ComponentTypeFloat32NV, RM, false); break; \
  case 1: MMA(gl_ComponentTypeFloat16NV, gl_ComponentTypeFloat16NV, gl_ComponentTypeFloat32NV, RM, false); break; \
  case 2: MMA(gl_ComponentTypeFloatE4M3NV, gl_ComponentTypeFloatE4M3NV, gl_ComponentTypeFloat16NV, RM, false); break; \
  case 3: MMA(gl_ComponentTypeSignedInt8NV, gl_ComponentTypeSignedInt8NV, gl_ComponentTypeFloat32NV, RM, false); break; \
  case 4: MM(gl_ComponentTypeFloatE5M2NV, gl_ComponentTypeFloat16NV, CM, false); break;
#include "common.glsl"
