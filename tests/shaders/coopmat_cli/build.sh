#!/bin/sh
cd "$(dirname "$0")"; ${GLSLANG:-glslang} -V --target-env vulkan1.3 lane_ids.comp -o lane_ids.spv
