#!/bin/sh
# Rebuilds the SPIR-V of the portability probes (glslang 16: ../../../../shared/tools/get-glslang).
set -e
cd "$(dirname "$0")"
G="${GLSLANG:-glslang} -V --target-env vulkan1.3"
$G tensor_rules.comp -o tensor_rules.spv
$G robust_access.comp -o robust_access.spv
