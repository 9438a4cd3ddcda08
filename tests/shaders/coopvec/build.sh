#!/bin/sh
# Rebuild the cooperative vector test shaders (the .spv are committed; tests never need this).
set -e
cd "$(dirname "$0")"
PREFIX=$(../../../../shared/tools/get-glslang | tail -n 1)
for f in *.comp; do
  "$PREFIX/bin/glslang" -V --target-env vulkan1.3 "$f" -o "${f%.comp}.spv" >/dev/null
done
