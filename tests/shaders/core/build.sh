#!/usr/bin/env bash
# Rebuild the committed .spv files from their GLSL (tests never need this: the .spv are committed).
# glslang 16 comes from ../../../shared/tools/get-glslang. Files named *.opt.spv are spirv-opt -O output.
set -euo pipefail
cd "$(dirname "$0")"
G=$("$(git rev-parse --show-toplevel)/../shared/tools/get-glslang")/bin
for f in *.comp; do
  "$G/glslang" -V --target-env vulkan1.3 "$f" -o "${f%.comp}.spv" >/dev/null
done
for f in control nesting loops; do
  "$G/spirv-opt" -O "$f.spv" -o "$f.opt.spv"
done
