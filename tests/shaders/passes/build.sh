#!/bin/sh
# Rebuild the passes' test shaders: glslang's output as it is, and through spirv-opt -O.
set -e
cd "$(dirname "$0")"
bin=$(../../../../shared/tools/get-glslang | tail -1)/bin
for s in loops copies private merge_phi struct carry carry_only struct_mixed; do
    "$bin/glslang" -V --target-env vulkan1.3 $s.comp -o $s.spv
    "$bin/spirv-opt" -O $s.spv -o ${s}_O.spv
done
"$bin/spirv-as" --target-env vulkan1.3 private_init.spvasm -o private_init.spv
"$bin/spirv-as" --target-env vulkan1.3 copy_to_unnamed.spvasm -o copy_to_unnamed.spv
