#!/bin/sh
# Rebuild the Vulkan driver's test shaders (the .spv are committed; tests never run this).
# glslang 16: ../../../../shared/tools/get-glslang (or set GLSLANG).
set -e
cd "$(dirname "$0")"
G=${GLSLANG:-/root/.cache/glslang16/bin/glslang}
V="-V --target-env vulkan1.3 -S comp"
for s in plumbing ids oob unsupported bda coopmat tensor qcom spin; do
    $G $V $s.comp -o $s.spv >/dev/null
done
$G $V coopvec.comp -o coopvec.spv >/dev/null
$G $V -DOPTIMAL coopvec.comp -o coopvec_optimal.spv >/dev/null
