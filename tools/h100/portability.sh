#!/bin/bash
# On the GPU machine: the portability probes (tools/h100/cases.py write build/h100p portability)
# through build/vkrun/vkrun without robustness and with VKRUN_ROBUST=1/2, packed into
# $OUT/probes.tgz (collect them with `python3 tools/h100/cases.py collect RESULTS DIR`, RESULTS
# holding <group>/d*_out*.bin: p0/t for portability_tensor, p2/r for portability_robust), then
# ggml's test-backend-ops on the three matrix paths ($OUT/h100_PATH.json, saved gzip-compressed as
# tests/oracle/ggml/h100_PATH.json.gz with `ggml_suite.save`).
# Carry .gl (the Vulkan loader's and libglvnd's .debs: libvulkan1 libegl1 libglvnd0 libopengl0 libgl1
# libglx0 libgles2), build/vkrun, build/h100p and .carry/ggml.tgz (a tar czf
# of get-ggml's folder, relative to ~/.cache). NO_GGML=1: the probes only; NO_PROBES=1: ggml only;
# GT: seconds per path. Each operation runs on its own (ggml_suite.py --each-op); a carried
# .carry/h100_PATH.json from an earlier run is continued.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
icd=$(ls /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json 2>/dev/null | head -1)
export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
echo "icd $icd"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p /root/.cache && tar xzf .carry/ggml.tgz -C /root/.cache
# get-ggml's `run` gives its own C runtime only its own libraries; the NVIDIA driver's (and
# libglvnd's, which it loads) come after them
sed -i "s|--library-path \"\([^\"]*\)\"|--library-path \"\1:${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu\"|" /root/.cache/ggml-sid/run
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"; grep -o 'library_path[^,]*' $icd
/root/.cache/ggml-sid/run test-backend-ops -b Vulkan0 -o ABS 2>&1 | grep -v "^  ABS" | head -12
if [ -z "$NO_PROBES" ]; then
for r in 0 2; do mkdir -p /tmp/pr/p$r/t; VKRUN_ROBUST=$r timeout 60 build/vkrun/vkrun -o /tmp/pr/p$r/t build/h100p/cases/portability_tensor/manifest.txt > /tmp/pr/p$r/tlog 2>&1; echo "tensor r=$r rc=$?"; grep -E "^case|robust" /tmp/pr/p$r/tlog; done
for r in 1 2; do mkdir -p /tmp/pr/p$r/r; VKRUN_ROBUST=$r timeout 60 build/vkrun/vkrun -o /tmp/pr/p$r/r build/h100p/cases/portability_robust/manifest.txt > /tmp/pr/p$r/rlog 2>&1; echo "robust r=$r rc=$?"; grep -E "^case|robust" /tmp/pr/p$r/rlog; done
head -3 /tmp/pr/p0/tlog
tar czf $OUT/probes.tgz -C /tmp/pr .
fi
[ -n "$NO_GGML" ] && exit 0
PY=$(command -v python3)
for p in coopmat2 coopmat1 scalar; do
  [ -f .carry/h100_$p.json ] && cp .carry/h100_$p.json $OUT/
  ( $PY tools/ggml_suite.py run $p --driver system --each-op -j 4 --timeout ${GT:-360} --json $OUT/h100_$p.json > $OUT/h100_$p.txt 2>&1; echo "$p done" ) &
done
wait
for p in coopmat2 coopmat1 scalar; do echo "== $p"; tail -4 $OUT/h100_$p.txt; done
