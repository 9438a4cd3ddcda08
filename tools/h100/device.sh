#!/bin/bash
# Runs every case of build/h100 (tools/h100/cases.py write) through build/vkrun/vkrun on the GPU
# machine and packs the buffers into $OUT/results.tgz. Carry .gl (the Vulkan loader .debs),
# build/vkrun and build/h100. Usage there: bash tools/h100/device.sh 2>&1 | tee $OUT/log
set -o pipefail
OUT=${OUT:-/tmp/out}
if ! ldconfig -p | grep -q libvulkan.so.1; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi
icd=${VK_DRIVER_FILES:-}
[ -z "$icd" ] && for f in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json \
         /etc/vulkan/icd.d/nvidia_icd.json; do
    [ -f "$f" ] && { icd=$f; break; }
  done
if [ -z "$icd" ]; then                      # no manifest: write one for the driver's library
    lib=$(ldconfig -p | awk '/libGLX_nvidia.so.0/ {print $NF; exit}')
    [ -z "$lib" ] && lib=$(ls /usr/local/nvidia/lib64/libGLX_nvidia.so.0 2>/dev/null)
    icd=/tmp/nvidia_icd.json
    printf '{"file_format_version":"1.0.1","ICD":{"library_path":"%s","api_version":"1.4.312"}}\n' "$lib" > $icd
fi
echo "ICD: $icd"; cat "$icd"
export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
date -u +"date: %Y-%m-%dT%H:%M:%SZ"
res=/tmp/h100_results
rm -rf $res && mkdir -p $res
failed=0
# probe_* groups (cases that hung the GPU before) run last, with short timeouts
for m in $(ls build/h100/cases/*/manifest.txt | grep -v /probe_) $(ls build/h100/cases/probe_*/manifest.txt 2>/dev/null); do
    g=$(basename "$(dirname "$m")")
    mkdir -p "$res/$g"
    case $g in probe_*) t=3 k=12 ;; *) t=20 k=120 ;; esac
    timeout -s KILL $k build/vkrun/vkrun -t $t -o "$res/$g" "$m" > "$res/$g/log.txt" 2>&1
    rc=$?
    grep -E "^(case|vkrun)" "$res/$g/log.txt" | grep -v ": ok " | sed "s/^/[$g] /"
    [ $rc -ne 0 ] && failed=$((failed + 1))
    echo "group $g rc=$rc"
done
first=$(ls $res/*/log.txt | head -1)
sed -n '1,/^features/p;/^features/p' "$first" | sort -u | head -40
cp "$first" $OUT/first_group_log.txt
tar czf $OUT/results.tgz -C $res .
echo "groups failed: $failed; results: $(du -sh $OUT/results.tgz)"
