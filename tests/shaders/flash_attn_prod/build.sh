#!/bin/sh
# Rebuild the production-style flash attention (the .spv are committed; tests never run this):
# as glslang writes it, and through spirv-opt -O. glslang 16 and SPIRV-Tools 2026:
# ../../../../shared/tools/get-glslang.
set -e
cd "$(dirname "$0")"
B=${GLSLANG_BIN:-$(../../../../shared/tools/get-glslang | tail -n 1)/bin}
$B/glslang -V --target-env vulkan1.3 flash_attn.comp -o flash_attn.spv >/dev/null
$B/spirv-opt --target-env=vulkan1.3 -O flash_attn.spv -o flash_attn_O.spv
