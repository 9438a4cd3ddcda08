#!/bin/sh
cd "$(dirname "$0")"; ${GLSLANG:-glslang} -V --target-env vulkan1.3 wg_muladd.comp -o wg_muladd.spv
