#version 460
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
#extension GL_KHR_shader_subgroup_ballot : enable
#extension GL_KHR_shader_subgroup_vote : enable
#extension GL_KHR_shader_subgroup_shuffle : enable
#extension GL_KHR_shader_subgroup_shuffle_relative : enable
#extension GL_KHR_shader_subgroup_clustered : enable
#extension GL_KHR_shader_subgroup_quad : enable
// One output row of 128 values per operation; odd lanes skip the "divergent" rows.
layout(local_size_x = 128) in;
layout(std430, binding = 0) readonly buffer I { int a[]; };
layout(std430, binding = 1) writeonly buffer O { int o[]; };
layout(std430, binding = 2) writeonly buffer F { float of[]; };
void main() {
  uint i = gl_LocalInvocationID.x;
  int x = a[i];
  uint N = 128;
  o[0 * N + i] = subgroupAdd(x);
  o[1 * N + i] = subgroupMul(x % 3 + 1);
  o[2 * N + i] = subgroupMin(x);
  o[3 * N + i] = subgroupMax(x);
  o[4 * N + i] = subgroupAnd(x);
  o[5 * N + i] = subgroupOr(x);
  o[6 * N + i] = subgroupXor(x);
  o[7 * N + i] = subgroupInclusiveAdd(x);
  o[8 * N + i] = subgroupExclusiveAdd(x);
  o[9 * N + i] = subgroupExclusiveMin(x);
  o[10 * N + i] = subgroupShuffle(x, (gl_SubgroupInvocationID * 5u + 3u) % gl_SubgroupSize);
  o[11 * N + i] = subgroupShuffleXor(x, 3u);
  o[12 * N + i] = subgroupShuffleUp(x, 2u);
  o[13 * N + i] = subgroupShuffleDown(x, 1u);
  o[14 * N + i] = subgroupBroadcast(x, 2u);
  o[15 * N + i] = subgroupBroadcastFirst(x);
  uvec4 bal = subgroupBallot(x > 0);
  o[16 * N + i] = int(subgroupBallotBitCount(bal));
  o[17 * N + i] = int(subgroupBallotInclusiveBitCount(bal));
  o[18 * N + i] = int(subgroupBallotFindLSB(bal));
  o[19 * N + i] = int(subgroupBallotFindMSB(bal));
  o[20 * N + i] = subgroupElect() ? 1 : 0;
  o[21 * N + i] = subgroupAll(x > -100) ? 1 : 0;
  o[22 * N + i] = subgroupAny(x == 7) ? 1 : 0;
  o[23 * N + i] = subgroupAllEqual(x) ? 1 : 0;
  o[24 * N + i] = subgroupClusteredAdd(x, 4u);
  o[25 * N + i] = subgroupClusteredMax(x, 8u);
  o[26 * N + i] = subgroupQuadBroadcast(x, 1u);
  o[27 * N + i] = subgroupQuadSwapHorizontal(x);
  o[28 * N + i] = subgroupQuadSwapVertical(x);
  o[29 * N + i] = subgroupQuadSwapDiagonal(x);
  o[30 * N + i] = int(gl_SubgroupInvocationID) + 1000 * int(gl_SubgroupID) + 100000 * int(gl_NumSubgroups);
  // divergent: only even lanes take part
  o[31 * N + i] = -1; o[32 * N + i] = -1; o[33 * N + i] = -1; o[34 * N + i] = -1;
  if ((i & 1u) == 0u) {
    o[31 * N + i] = subgroupAdd(x);
    o[32 * N + i] = subgroupInclusiveAdd(x);
    o[33 * N + i] = subgroupElect() ? 1 : 0;
    o[34 * N + i] = int(subgroupBallotBitCount(subgroupBallot(true)));
  }
  float fx = float(x) * 0.5;
  of[i] = subgroupAdd(fx);
  of[N + i] = subgroupMax(fx);
}
