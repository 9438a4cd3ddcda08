#!/bin/sh
cd "$(dirname "$0")"
for f in wg_muladd clamp_acc; do
  ${GLSLANG:-glslang} -V --target-env vulkan1.3 $f.comp -o $f.spv
done
