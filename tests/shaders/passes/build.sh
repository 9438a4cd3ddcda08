#!/bin/sh
# Rebuild the passes' test shaders: glslang's output as it is, and through spirv-opt -O.
set -e
cd "$(dirname "$0")"
bin=$(../../../../shared/tools/get-glslang | tail -1)/bin
"$bin/glslang" -V --target-env vulkan1.3 loops.comp -o loops.spv
"$bin/spirv-opt" -O loops.spv -o loops_O.spv
"$bin/glslang" -V --target-env vulkan1.3 copies.comp -o copies.spv
"$bin/spirv-opt" -O copies.spv -o copies_O.spv
"$bin/glslang" -V --target-env vulkan1.3 private.comp -o private.spv
"$bin/spirv-opt" -O private.spv -o private_O.spv
"$bin/spirv-as" --target-env vulkan1.3 private_init.spvasm -o private_init.spv
"$bin/glslang" -V --target-env vulkan1.3 merge_phi.comp -o merge_phi.spv
"$bin/spirv-opt" -O merge_phi.spv -o merge_phi_O.spv
"$bin/spirv-as" --target-env vulkan1.3 copy_to_unnamed.spvasm -o copy_to_unnamed.spv
"$bin/glslang" -V --target-env vulkan1.3 struct.comp -o struct.spv
"$bin/spirv-opt" -O struct.spv -o struct_O.spv
"$bin/glslang" -V --target-env vulkan1.3 carry.comp -o carry.spv
"$bin/spirv-opt" -O carry.spv -o carry_O.spv
"$bin/glslang" -V --target-env vulkan1.3 carry_only.comp -o carry_only.spv
"$bin/spirv-opt" -O carry_only.spv -o carry_only_O.spv
"$bin/glslang" -V --target-env vulkan1.3 struct_mixed.comp -o struct_mixed.spv
"$bin/spirv-opt" -O struct_mixed.spv -o struct_mixed_O.spv
