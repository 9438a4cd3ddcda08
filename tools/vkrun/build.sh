#!/bin/sh
# Builds tools/vkrun/vkrun into ${1:-build/vkrun} (an ignored folder). Needs a C compiler and the
# Vulkan headers (1.3 or newer; the newer extensions' structures are declared in vkrun.c):
# VULKAN_INCLUDE=/path/to/include (holding vulkan/vulkan.h), else the system's. On a Debian/Ubuntu
# machine without them: apt-get download libvulkan-dev && dpkg -x libvulkan-dev_*.deb /tmp/vkdev,
# then VULKAN_INCLUDE=/tmp/vkdev/usr/include. libvulkan.so.1 is loaded at run time (dlopen).
set -e
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/../../build/vkrun}"
mkdir -p "$out"
inc=""
[ -n "$VULKAN_INCLUDE" ] && inc="-I$VULKAN_INCLUDE"
${CC:-cc} -O2 -std=c11 -Wall -Wextra -Wno-missing-field-initializers $inc "$here/vkrun.c" -o "$out/vkrun" -ldl
echo "$out/vkrun"
