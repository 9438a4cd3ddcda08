"""jitcoop's Vulkan driver (jitcoop/icd) through the real Vulkan loader.

C programs built here (tests/icd/*.c and the project's tools/vkrun) run on the driver with the
Khronos validation layer enabled. References:
- the device profiles (jitcoop.devices and the H100 / lavapipe recordings) for what vulkaninfo
  and the property queries report;
- the same dispatch through jitcoop's Python API (the same bytes in, the same spec constant
  bytes, the same kernel) for every shader run through Vulkan: the bytes must be equal;
- numpy from each shader's definition (integer-valued halves keep every float result exact,
  so those checks are exact too), or values worked out by hand in the C programs.

Needs a C compiler and the Vulkan loader (Debian: libvulkan1, libvulkan-dev, vulkan-tools,
vulkan-validationlayers; .ci/run installs them); without the loader the tests are skipped.

Bookworm's validation layer (1.3.239) predates the cooperative matrix and vector extensions. It
says so: "unknown VkStructureType" for their structures, "Unhandled OpCapability", a SPIR-V
extension "not supported", spirv-val's "Invalid capability operand" (and then it cannot
specialize the module either). Those messages, for exactly those extensions, are the only ones a
check accepts; any other validation message fails it. A newer layer knows the extensions and
prints none of them.
"""
import ctypes.util
import json
import os
import re
import shutil
import struct
import subprocess
import warnings
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

import jitcoop
from jitcoop import devices

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent / "icd"
SHADERS = HERE / "shaders"
CORE = Path(__file__).resolve().parent / "shaders" / "core"
TIMEOUT = 600

pytestmark = pytest.mark.skipif(ctypes.util.find_library("vulkan") is None or shutil.which("cc") is None,
                                reason="needs the Vulkan loader (libvulkan1, libvulkan-dev) and a C compiler")


# -- building and running -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def manifest():
    from jitcoop import icd
    return icd.manifest_path()


@pytest.fixture(scope="module")
def programs(tmp_path_factory, manifest):
    out = tmp_path_factory.mktemp("icd_programs")
    inc = str(ROOT / "jitcoop" / "icd" / "include")
    cc = os.environ.get("CC", "cc")
    for name in ("devinfo", "api", "coopvec", "invalid", "portability"):
        subprocess.run([cc, "-O1", "-std=c11", "-Wall", "-Wextra", "-Werror", "-Wno-missing-field-initializers",
                        f"-I{inc}", str(HERE / f"{name}.c"), "-o", str(out / name), "-lvulkan"],
                       check=True, capture_output=True, text=True)
    subprocess.run(["sh", str(ROOT / "tools" / "vkrun" / "build.sh"), str(out)], check=True,
                   capture_output=True, text=True, env={**os.environ, "VULKAN_INCLUDE": inc})
    return out


def vk_env(manifest, profiles="nvidia", validation=True):
    """The environment of a program run on the driver alone (no other driver, no implicit layer
    choosing devices), with the validation layer or without; profiles None: the driver's default."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("VK_ICD_FILENAMES", "VK_ADD_DRIVER_FILES", "VK_INSTANCE_LAYERS", "VK_LAYER_DISABLES")}
    env.pop("JITCOOP_ICD_PROFILES", None)
    env.update(VK_DRIVER_FILES=str(manifest), NODEVICE_SELECT="1")
    if profiles is not None:
        env["JITCOOP_ICD_PROFILES"] = profiles
    if validation:
        env["VK_INSTANCE_LAYERS"] = "VK_LAYER_KHRONOS_validation"
    return env


def run(cmd, env, check_rc=True):
    p = subprocess.run([str(c) for c in cmd], env=env, capture_output=True, text=True, timeout=TIMEOUT)
    if check_rc and p.returncode != 0:
        raise AssertionError(f"{cmd[0]} exited with {p.returncode}\n{p.stdout[-6000:]}\n{p.stderr[-6000:]}")
    return p


# -- the validation layer ---------------------------------------------------------------------------

# Extensions newer than bookworm's layer: their registry numbers (sType = 1000000000 + 1000 (n - 1)
# + k), Vulkan and SPIR-V names.
NEWER_THAN_LAYER = {142, 173, 492, 507, 565, 568, 594, 636, 690}
NEWER_VK = {"VK_KHR_cooperative_matrix", "VK_NV_cooperative_matrix2", "VK_NV_cooperative_vector",
            "VK_KHR_shader_bfloat16", "VK_EXT_shader_float8", "VK_EXT_shader_replicated_composites",
            "VK_QCOM_cooperative_matrix_conversion", "VK_NV_cooperative_matrix_decode_vector",
            "VK_EXT_shader_long_vector"}
NEWER_SPV = {"SPV_KHR_cooperative_matrix", "SPV_NV_cooperative_matrix2", "SPV_NV_tensor_addressing",
             "SPV_NV_cooperative_vector", "SPV_EXT_replicated_composites", "SPV_KHR_bfloat16", "SPV_EXT_float8",
             "SPV_QCOM_cooperative_matrix_conversion", "SPV_NV_cooperative_matrix_decode_vector",
             "SPV_EXT_long_vector"}


_NEWER_CAPABILITIES = ("CooperativeMatrix", "CooperativeVector", "TensorAddressing", "BFloat16", "Float8",
                       "ReplicatedComposites", "LongVector")


def _newer_capability(number: int) -> bool:
    from jitcoop.spirv.grammar import grammar
    return any(k in grammar().enum_name("Capability", number) for k in _NEWER_CAPABILITIES)


def layer_does_not_know(line: str) -> bool:
    """A validation message in which the layer says it does not know one of those extensions
    (or their SPIR-V capabilities: its SPIRV-Tools cannot read such a module at all)."""
    m = re.search(r"unknown VkStructureType \((\d+)\)", line)
    if m:
        return (int(m.group(1)) - 1000000000) // 1000 + 1 in NEWER_THAN_LAYER
    m = re.search(r"SPIR-V Extension \((\w+)\) was declared that is not supported", line)
    if m:
        return m.group(1) in NEWER_SPV
    m = re.search(r"Device Extension (\w+) is not supported by this layer", line)
    if m:
        return m.group(1) in NEWER_VK
    m = re.search(r"Invalid capability operand: (\d+)", line)
    if m:
        return _newer_capability(int(m.group(1)))
    return "Unhandled OpCapability" in line


def validation_problems(output: str) -> list:
    lines = [ln for ln in output.splitlines() if "Validation Error" in ln or "Validation Warning" in ln]
    unreadable = any("Invalid capability operand" in ln and layer_does_not_know(ln) for ln in lines)
    # a module the layer could not read, it cannot specialize either (VUID ...-06719 follows)
    return [ln for ln in lines if not layer_does_not_know(ln)
            and not (unreadable and "attempted to apply specialization constants with spirv-opt but failed" in ln)]


def checks(output: str) -> dict:
    """{name: detail} of a test program's "ok NAME detail" lines; a FAIL line fails the test."""
    fails = [ln for ln in output.splitlines() if ln.startswith("FAIL")]
    assert not fails, "\n".join(fails)
    return {ln.split()[1]: ln for ln in output.splitlines() if ln.startswith("ok ")}


# -- references --------------------------------------------------------------------------------------

_devices = {}


def python_dispatch(profile, spv, groups, bindings, push=None, spec=None):
    """The same dispatch through jitcoop's Python API; bindings are modified in place."""
    if profile not in _devices:
        _devices[profile] = jitcoop.Device(profile)
    k = _devices[profile].load(spv).kernel("main", spec=spec or {})
    k.dispatch(groups, bindings, push=push)
    return bindings


def recorded(name):
    return resources.files("jitcoop.devices").joinpath("data", name).read_text()


# -- the manifest and the command line ----------------------------------------------------------------

def test_jitcoop_icd_prints_the_manifest(manifest):
    from jitcoop.cli import main
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["icd", "--path"]) == 0
    path = Path(out.getvalue().strip())
    assert path == manifest and path.is_file()
    m = json.loads(path.read_text())
    lib = (path.parent / m["ICD"]["library_path"]).resolve()
    assert m["ICD"]["library_path"].startswith("./") and lib.is_file()
    assert m["ICD"]["api_version"].startswith("1.3")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["icd"]) == 0
    assert f"VK_DRIVER_FILES={path}" in out.getvalue() and "JITCOOP_ICD_PROFILES" in out.getvalue()


# -- what the devices say --------------------------------------------------------------------------

@pytest.mark.parametrize("hide", ["", "VK_NV_cooperative_matrix2", "VK_NV_cooperative_matrix2,VK_KHR_cooperative_matrix"])
def test_hidden_extensions(manifest, hide):
    """JITCOOP_ICD_HIDE takes extensions off the device (an application's paths for devices
    without them: ggml's KHR-coopmat and scalar shaders); robust buffer access stays offered."""
    if shutil.which("vulkaninfo") is None:
        pytest.skip("vulkaninfo (vulkan-tools) is not installed")
    env = vk_env(manifest, "nvidia")
    env["JITCOOP_ICD_HIDE"] = hide
    p = run(["vulkaninfo"], env)
    assert validation_problems(p.stdout + p.stderr) == []
    exts = set(re.findall(r"^\s*(VK_\w+)\s*: extension revision", p.stdout, re.M))
    hidden = set(filter(None, hide.split(",")))
    assert not hidden & exts
    assert {"VK_KHR_cooperative_matrix", "VK_NV_cooperative_matrix2"} - hidden <= exts
    assert {"VK_EXT_robustness2", "VK_EXT_pipeline_robustness"} <= exts
    assert re.search(r"^\s*robustBufferAccess\s*= true", p.stdout, re.M)
    assert re.search(r"^\s*robustBufferAccess2\s*= true", p.stdout, re.M)
    env["JITCOOP_ICD_HIDE"] = "VK_KHR_no_such_extension"
    p = run(["vulkaninfo"], env, check_rc=False)
    assert "JITCOOP_ICD_HIDE: VK_KHR_no_such_extension is not a device extension jitcoop offers" in p.stdout + p.stderr


def test_vulkaninfo_lists_one_device_per_profile(manifest):
    if shutil.which("vulkaninfo") is None:
        pytest.skip("vulkaninfo (vulkan-tools) is not installed")
    p = run(["vulkaninfo"], vk_env(manifest, "nvidia,lavapipe"))
    assert validation_problems(p.stdout + p.stderr) == []
    names = set(re.findall(r"^\s*deviceName\s*= (.*)$", p.stdout, re.M))
    h100 = re.search(r"^device: (.*?)\s+vendor (0x[0-9a-f]+) device (0x[0-9a-f]+)", recorded("props-h100.txt"), re.M)
    lvp = re.search(r"^device: (.*?)\s+vendor (0x[0-9a-f]+)", recorded("props-lavapipe-26.1.txt"), re.M)
    assert len(names) == 2 and any(h100.group(1) in n for n in names) and any(lvp.group(1) in n for n in names)
    sections = p.stdout.split("VkPhysicalDeviceProperties:")[1:]
    assert len(sections) == 2
    if h100.group(1) not in sections[0].split("deviceName", 1)[1].splitlines()[0]:
        sections.reverse()               # the loader orders physical devices as it likes
    for text, prof, rec in ((sections[0], "nvidia", "props-h100.txt"), (sections[1], "lavapipe", "props-lavapipe-26.1.txt")):
        profile = devices.profile(prof)
        sg = re.search(r"^\s*subgroupSize\s*= (\d+)", text, re.M)
        assert int(sg.group(1)) == profile.subgroup_size
        assert int(re.search(r"maxComputeWorkGroupInvocations\s*= (\d+)", text).group(1)) == \
            profile.max_workgroup_invocations
        shared = re.search(r"maxComputeSharedMemorySize (\d+)", recorded(rec)).group(1)
        assert re.search(rf"maxComputeSharedMemorySize\s*= {shared}\b", text)
        exts = set(re.findall(r"^\s*(VK_\w+)\s*: extension revision", text, re.M))
        # every cooperative extension the recorded driver has, but NV_cooperative_matrix (v1),
        # which jitcoop does not implement
        want = set(re.findall(r"^  (VK_\w+) rev", recorded(rec), re.M)) - {"VK_NV_cooperative_matrix"}
        assert want <= exts, want - exts
    nv = sections[0]
    assert re.search(r"vendorID\s*= " + h100.group(2), nv) and re.search(r"deviceID\s*= " + h100.group(3), nv)
    assert "VK_NV_cooperative_vector" not in sections[1]


COMPONENT = {0: "f16", 1: "f32", 2: "f64", 3: "s8", 4: "s16", 5: "s32", 6: "s64", 7: "u8", 8: "u16", 9: "u32",
             10: "u64", 1000141000: "bf16", 1000491000: "s8packed", 1000491001: "u8packed", 1000491002: "e4m3",
             1000491003: "e5m2"}      # VkComponentTypeKHR (the spec's values)


def _devinfo(output):
    devs = {}
    for ln in output.splitlines():
        f = ln.split()
        if len(f) >= 3 and f[0] == "device":
            devs.setdefault(int(f[1]), []).append((f[2], f[3:]))
    return devs


def _facts(rows, key):
    return [v for k, v in rows if k == key]


def test_property_tables_match_the_profiles(programs, manifest):
    p = run([programs / "devinfo"], vk_env(manifest, "nvidia,lavapipe,generic:16"))
    assert validation_problems(p.stdout) == []
    found = _devinfo(p.stdout)
    assert len(found) == 3
    # the loader orders physical devices as it likes (discrete GPUs first): find them by name
    by_name = {" ".join(_facts(rows, "name")[0]): rows for rows in found.values()}
    devs = {}
    for d, key in ((0, "NVIDIA H100"), (1, "llvmpipe"), (2, "generic")):
        devs[d] = next(rows for name, rows in by_name.items() if key in name)
    for d, prof in ((0, "nvidia"), (1, "lavapipe")):
        profile, rows = devices.profile(prof), devs[d]
        coopmat = [(int(m), int(n), int(k), COMPONENT[int(a)], COMPONENT[int(b)], COMPONENT[int(c)],
                    COMPONENT[int(r)], int(s), int(sc)) for m, n, k, a, b, c, r, s, sc in _facts(rows, "coopmat")]
        assert coopmat == [(x.M, x.N, x.K, x.A, x.B, x.C, x.R, int(x.saturating), x.scope) for x in profile.coopmat]
        flex = [(int(m), int(n), int(k), COMPONENT[int(a)], COMPONENT[int(b)], COMPONENT[int(c)],
                 COMPONENT[int(r)], int(s), int(sc), int(w)) for m, n, k, a, b, c, r, s, sc, w in _facts(rows, "flexible")]
        assert flex == [(x.M, x.N, x.K, x.A, x.B, x.C, x.R, int(x.saturating), x.scope, x.wg_invocations)
                        for x in profile.flexible]
        assert _facts(rows, "coopmatShort") == [["5", "1"]]          # VK_INCOMPLETE, one written
        assert _facts(rows, "subgroupSize") == [[str(profile.subgroup_size)]]
        assert _facts(rows, "minSubgroupSize") == [[str(min(profile.subgroup_sizes))]]
    nv, lvp = devs[0], devs[1]
    # coopmat2 features and limits, as recorded on the H100 and on lavapipe 26.1
    rec = re.search(r"NV coopmat2 props: workgroupScopeMaxWorkgroupSize (\d+) flexibleDimensionsMaxDimension (\d+) "
                    r"workgroupScopeReservedSharedMemory (\d+)", recorded("props-h100.txt")).groups()
    assert _facts(nv, "coopmat2") == [list(rec)]
    for rows, name in ((nv, "props-h100.txt"), (lvp, "props-lavapipe-26.1.txt")):
        line = re.search(r"^NV coopmat2 features: (.*)$", recorded(name), re.M).group(1).split()
        want = dict(zip(line[::2], line[1::2]))
        feats = dict(v for k, v in rows if k == "feature")
        got = {f[len("cooperativeMatrix"):]: v for f, v in feats.items()
               if f.startswith("cooperativeMatrix") and f != "cooperativeMatrix"}
        assert got == {"WorkgroupScope": want["workgroupScope"], "FlexibleDimensions": want["flexibleDimensions"],
                       "Reductions": want["reductions"], "Conversions": want["conversions"],
                       "PerElementOperations": want["perElementOps"], "TensorAddressing": want["tensorAddressing"],
                       "BlockLoads": want["blockLoads"]}
    # cooperative vectors: the H100's 16 combinations and limits; lavapipe has none
    table = re.search(r"VkCooperativeVectorPropertiesNV: \d+ entries\n.*?\n((?:  .*\n)+)", recorded("props-h100.txt"))
    want = [tuple(ln.split()) for ln in table.group(1).splitlines()]
    got = [tuple(COMPONENT[int(x)] for x in r[:5]) + (r[5],) for r in _facts(nv, "coopvec")]
    assert got == want
    cv = re.search(r"NV coopvec features: .*props: stages \S+ trainingF16Acc (\d) trainingF32Acc (\d) maxComponents (\d+)",
                   recorded("props-h100.txt")).groups()
    assert _facts(nv, "coopvecProps") == [["32", *cv]]
    assert not _facts(lvp, "coopvec") and ["VK_NV_cooperative_vector", "4"] not in _facts(lvp, "extension")
    # a profile with a chosen subgroup size; every table holds the combinations the spec requires
    gen = devs[2]
    assert _facts(gen, "subgroupSize") == [["16"]] and _facts(gen, "minSubgroupSize") == [["4"]]
    rows = {tuple(COMPONENT[int(x)] for x in r[3:7]) for r in _facts(gen, "coopmat")}
    assert {("f16", "f16", "f16", "f16"), ("f16", "f16", "f32", "f32"), ("u8", "u8", "u32", "u32"),
            ("s8", "s8", "s32", "s32")} <= rows
    assert all(int(v) & (int(v) - 1) == 0 for r in _facts(gen, "coopmat") for v in r[:3])
    req = {("f16", "f16", "f16", "f16", "f16"), ("u32", "s8packed", "s8", "s32", "s32"), ("s8", "s8", "s8", "s32", "s32"),
           ("f32", "s8", "s8", "s32", "s32"), ("f16", "e4m3", "e4m3", "f16", "f16"), ("f16", "e5m2", "e5m2", "f16", "f16")}
    assert req <= {tuple(COMPONENT[int(x)] for x in r[:5]) for r in _facts(gen, "coopvec")}
    assert len({tuple(_facts(devs[d], "cacheUUID")[0]) for d in devs}) == 3


def test_default_is_one_nvidia_device(programs, manifest):
    p = run([programs / "devinfo"], vk_env(manifest, None))
    assert p.stdout.count("\ndevice 0 name ") == 1 and "devices 1\n" in p.stdout
    assert "device 0 name NVIDIA H100 80GB HBM3 (jitcoop nvidia profile)" in p.stdout


def test_unknown_profile_fails_vkcreateinstance(programs, manifest):
    p = run([programs / "devinfo"], vk_env(manifest, "nvidia,h200", validation=False), check_rc=False)
    assert p.returncode == 2
    assert "vkCreateInstance" in p.stdout and "unknown device profile 'h200'" in p.stdout + p.stderr


# -- the same bytes as the Python API ------------------------------------------------------------------

def _halves(rng, shape, lo=-4, hi=4):
    """float16 values that are small integers: every product and sum below stays exact."""
    return rng.integers(lo, hi + 1, shape).astype(np.float16)


def _vkrun(programs, manifest, profile, cases, tmp_path):
    """Run vkrun on cases [(name, spv, groups, [(binding, size, input array or None, is output)], push)];
    returns {name: {binding: bytes}} of the outputs."""
    lines = []
    for name, spv, groups, binds, push in cases:
        lines += [f"case {name}", f"spv {spv}", "groups " + " ".join(map(str, groups))]
        if push is not None:
            (tmp_path / f"{name}.push").write_bytes(push)
            lines.append(f"push {name}.push")
        for b, size, arr, out in binds:
            src = "-"
            if arr is not None:
                src = f"{name}_{b}.in"
                arr.tofile(tmp_path / src)
            lines.append(f"bind {b} {size} {src} {f'{name}_{b}.out' if out else '-'}")
    (tmp_path / "cases.txt").write_text("\n".join(lines) + "\n")
    p = run([programs / "vkrun", "-t", TIMEOUT, "-o", tmp_path, tmp_path / "cases.txt"], vk_env(manifest, profile))
    assert validation_problems(p.stdout + p.stderr) == [], p.stdout[-4000:]
    for name, *_ in cases:
        assert re.search(rf"^case {name}: ok", p.stdout, re.M), p.stdout[-4000:]
    return {name: {b: (tmp_path / f"{name}_{b}.out").read_bytes() for b, _, _, out in binds if out}
            for name, _, _, binds, _ in cases}


@pytest.mark.parametrize("tier", [None, "fast"], ids=["optimized", "fast"])
def test_shader_families_give_the_python_api_bytes(programs, manifest, tmp_path, monkeypatch, tier):
    """Core, VK_KHR_cooperative_matrix, coopmat2 tensor addressing and cooperative vectors on the
    nvidia profile: vkrun's results are the Python API's bytes (its kernels at the optimized
    tier), and numpy's; the driver's pipelines at the optimized tier (the test run's
    JITCOOP_TIER), then at the fast tier (JITCOOP_ICD_TIER)."""
    if tier:
        monkeypatch.setenv("JITCOOP_ICD_TIER", tier)
    rng = np.random.default_rng(19)
    n = 1000
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    saxpy_push = struct.pack("<fI", 1.75, n)
    a, b = _halves(rng, (2, 16, 16)), _halves(rng, (2, 16, 16))
    c = rng.integers(-50, 50, (2, 16, 16)).astype(np.float32)
    R, C, r0, c0 = 20, 24, 10, 12
    t = _halves(rng, (R, C), -100, 100)
    tensor_push = struct.pack("<4I", R, C, r0, c0)
    vin = (_halves(rng, (32, 8), -8, 8) / 4).astype(np.float16)
    mat = (_halves(rng, (8, 8), -8, 8) / 4).astype(np.float16)
    bias = (_halves(rng, 8, -8, 8) / 4).astype(np.float16)
    matbuf = np.concatenate([mat.view(np.uint8).reshape(-1), bias.view(np.uint8)])
    # the Python API first: the driver then finds the same kernels in jitcoop's disk cache
    ref_saxpy = python_dispatch("nvidia", CORE / "saxpy.spv", (4, 1, 1), {0: x.copy(), 1: y.copy()}, saxpy_push)
    ref_coopmat = python_dispatch("nvidia", SHADERS / "coopmat.spv", (2, 1, 1),
                                  {0: a, 1: b, 2: c, 3: np.zeros_like(c)})
    ref_tensor = python_dispatch("nvidia", SHADERS / "tensor.spv", (1, 1, 1),
                                 {0: t, 1: np.zeros((16, 16), np.float16)}, tensor_push)
    ref_coopvec = python_dispatch("nvidia", SHADERS / "coopvec.spv", (1, 1, 1),
                                  {0: vin, 1: matbuf, 2: np.zeros_like(vin)})
    out = _vkrun(programs, manifest, "nvidia", [
        ("saxpy", CORE / "saxpy.spv", (4, 1, 1), [(0, 0, x, False), (1, 0, y, True)], saxpy_push),
        ("coopmat", SHADERS / "coopmat.spv", (2, 1, 1),
         [(0, 0, a, False), (1, 0, b, False), (2, 0, c, False), (3, c.nbytes, None, True)], None),
        ("tensor", SHADERS / "tensor.spv", (1, 1, 1), [(0, 0, t, False), (1, 512, None, True)], tensor_push),
        ("coopvec", SHADERS / "coopvec.spv", (1, 1, 1),
         [(0, 0, vin, False), (1, 0, matbuf, False), (2, vin.nbytes, None, True)], None),
    ], tmp_path)

    assert out["saxpy"][1] == ref_saxpy[1].tobytes()
    np.testing.assert_allclose(np.frombuffer(out["saxpy"][1], np.float32), np.float32(1.75) * x + y, rtol=1e-6)

    assert out["coopmat"][3] == ref_coopmat[3].tobytes()
    want = (a.astype(np.float64) @ b.astype(np.float64) + c).astype(np.float32)
    assert np.array_equal(np.frombuffer(out["coopmat"][3], np.float32).reshape(2, 16, 16), want)

    assert out["tensor"][1] == ref_tensor[1].tobytes()
    want = np.zeros((16, 16), np.float16)
    want[:R - r0, :C - c0] = t[r0:, c0:]                  # Constant clamp: 0 outside the tensor
    assert np.array_equal(np.frombuffer(out["tensor"][1], np.float16).reshape(16, 16), want)

    assert out["coopvec"][2] == ref_coopvec[2].tobytes()
    want = (vin.astype(np.float64) @ mat.astype(np.float64).T + bias).astype(np.float16)
    assert np.array_equal(np.frombuffer(out["coopvec"][2], np.float16).reshape(32, 8), want)


def test_qcom_conversion_gives_the_python_api_bytes(programs, manifest, tmp_path):
    """VK_QCOM_cooperative_matrix_conversion on the qualcomm profile (subgroup size 64)."""
    rng = np.random.default_rng(20)
    rows = rng.standard_normal((64, 16)).astype(np.float16)
    ref = python_dispatch("qualcomm", SHADERS / "qcom.spv", (1, 1, 1),
                          {0: rows, 1: np.zeros_like(rows), 2: np.zeros_like(rows)})
    out = _vkrun(programs, manifest, "qualcomm", [
        ("qcom", SHADERS / "qcom.spv", (1, 1, 1), [(0, 0, rows, False), (1, rows.nbytes, None, True),
                                                   (2, rows.nbytes, None, True)], None)], tmp_path)
    assert out["qcom"][1] == ref[1].tobytes() and out["qcom"][2] == ref[2].tobytes()
    # invocation i's array is row i of the matrix, and comes back unchanged
    assert out["qcom"][1] == rows.tobytes() and out["qcom"][2] == rows.tobytes()


# -- the API surface ---------------------------------------------------------------------------------

def test_compute_api(programs, manifest, tmp_path):
    """api.c: descriptor sets, dynamic offsets, push descriptors and templates, spec constants,
    copies (run in vkQueueSubmit), dispatch base and indirect, buffer device addresses, fences,
    timeline and binary semaphores, a polled fence, events, timestamps, secondary command buffers,
    pipeline caches, 300 pipelines, a shader jitcoop cannot run (a storage image) and a lost device."""
    p = run([programs / "api", SHADERS, tmp_path], vk_env(manifest))
    assert validation_problems(p.stdout) == []
    ok = checks(p.stdout)
    assert set(ok) >= {"plumbing_dispatch", "push_descriptors_and_template", "copies", "copies_in_submit",
                       "dispatch_base", "dispatch_indirect", "buffer_device_address", "fences", "timeline_semaphore",
                       "binary_semaphore", "fence_poll", "events", "timestamps", "timestamps_reset", "secondary_command_buffer",
                       "pipeline_cache", "many_pipelines", "unsupported_shader", "device_lost", "device_lost_stays"}
    # the driver's own errors reached the messenger: the instruction it cannot run, the lost device
    assert re.search(r"debug error: .*%20 OpVariable at byte 552: .*Image", p.stdout)
    assert re.search(r"debug error: device lost: vkCmdDispatch .*OpStore at byte \d+ workgroup \(0, 0, 0\) lane 0: "
                     r"out-of-bounds access", p.stdout)

    f32 = lambda name: np.fromfile(tmp_path / name, np.float32)       # noqa: E731
    x, y0, u = f32("plumbing_x.bin"), f32("plumbing_y0.bin"), np.fromfile(tmp_path / "plumbing_u.bin", np.uint8)
    y = y0.copy()
    python_dispatch("nvidia", SHADERS / "plumbing.spv", ((1000 + 63) // 64, 1, 1),
                    {(0, 0): x, (0, 1): y, (1, 0): u[256:272]}, struct.pack("<If", 1000, 1.5),
                    spec={0: struct.pack("<f", 0.5), 1: struct.pack("<I", 64)})
    got = f32("plumbing_y.bin")
    assert got.tobytes() == y.tobytes()
    want = np.float32(0.5) * (np.float32(5.0) * x + np.float32(1.5)) + y0
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)

    for name, base, groups in (("ids_base.bin", (1, 2, 0), (2, 1, 1)), ("ids_indirect.bin", (0, 0, 0), (3, 2, 1))):
        got = np.fromfile(tmp_path / name, np.uint32).reshape(8, 16, 4)
        want = np.zeros((8, 16, 4), np.uint32)
        for wz in range(groups[2]):
            for wy in range(groups[1]):
                for wx in range(groups[0]):
                    w = (base[0] + wx, base[1] + wy, base[2] + wz)
                    for ly in range(2):
                        for lx in range(4):
                            gx, gy = w[0] * 4 + lx, w[1] * 2 + ly
                            want[gy, gx] = (*w, gx + 1000 * gy)
        assert np.array_equal(got, want), name


def test_cooperative_vector_matrix_conversion(programs, manifest, tmp_path):
    """vkConvertCooperativeVectorMatrixNV (host and command buffer) against
    jitcoop.convert_coopvec_matrix, and a dispatch on the converted matrix against the Python API
    and numpy."""
    p = run([programs / "coopvec", SHADERS, tmp_path], vk_env(manifest))
    assert validation_problems(p.stdout) == []
    assert {"coopvec_convert", "coopvec_device_convert", "coopvec_dispatch"} <= set(checks(p.stdout))
    src = np.fromfile(tmp_path / "coopvec_src.bin", np.float32).reshape(8, 8)
    matbuf = np.fromfile(tmp_path / "coopvec_matrix.bin", np.uint8)
    want = jitcoop.convert_coopvec_matrix(src, 8, 8, "f32", "f16", "row_major", "inferencing_optimal",
                                          src_stride=32, profile="nvidia")
    assert matbuf[:512].tobytes() == want.tobytes()
    x = np.fromfile(tmp_path / "coopvec_x.bin", np.float16).reshape(32, 8)
    r = np.zeros_like(x)
    python_dispatch("nvidia", SHADERS / "coopvec_optimal.spv", (1, 1, 1), {0: x, 1: matbuf, 2: r})
    got = np.fromfile(tmp_path / "coopvec_r.bin", np.float16).reshape(32, 8)
    assert got.tobytes() == r.tobytes()
    bias = matbuf[512:528].view(np.float16)
    m16 = src.astype(np.float16).astype(np.float64)
    assert np.array_equal(got, (x.astype(np.float64) @ m16.T + bias).astype(np.float16))


def test_invalid_arguments_return_errors(programs, manifest):
    """invalid.c, without the validation layer: errors and messages, never a crash."""
    p = run([programs / "invalid"], vk_env(manifest, validation=False))
    assert set(checks(p.stdout)) == {"unknown_extension", "unsupported_feature", "too_many_queues",
                                     "huge_allocation", "map_device_local", "bogus_buffer_handle",
                                     "destroy_bogus_handle", "buffer_larger_than_memory", "short_spirv",
                                     "pool_exhausted", "image_descriptor", "images_unsupported", "occlusion_queries"}
    assert "internal error" not in p.stdout + p.stderr


# -- more families, a required subgroup size and the example (slow: they compile large kernels) -----

@pytest.mark.slow
def test_required_subgroup_size(programs, manifest, tmp_path):
    """Subgroup operations under VkPipelineShaderStageRequiredSubgroupSizeCreateInfo: the generic
    profile at subgroup size 16 (its default is 32)."""
    a = np.random.default_rng(21).integers(-50, 50, 128).astype(np.int32)
    spv = CORE / "subgroups.spv"
    o, of = np.zeros(35 * 128, np.int32), np.zeros(256, np.float32)
    dev = jitcoop.Device("generic", 16)
    dev.load(spv).kernel("main").dispatch((1, 1, 1), {0: a, 1: o, 2: of})
    (tmp_path / "a.bin").write_bytes(a.tobytes())
    (tmp_path / "cases.txt").write_text(f"case sg16\nspv {spv}\nsubgroup 16\nbind 0 0 a.bin -\n"
                                        f"bind 1 {o.nbytes} - o.bin\nbind 2 {of.nbytes} - of.bin\n")
    p = run([programs / "vkrun", "-t", TIMEOUT, tmp_path / "cases.txt"], vk_env(manifest, "generic"))
    assert validation_problems(p.stdout) == [] and "case sg16: ok" in p.stdout
    got = np.fromfile(tmp_path / "o.bin", np.int32)
    assert got.tobytes() == o.tobytes() and (tmp_path / "of.bin").read_bytes() == of.tobytes()
    groups = a.reshape(8, 16)
    assert np.array_equal(got[:128], np.repeat(groups.sum(axis=1), 16))                      # subgroupAdd
    assert np.array_equal(got[7 * 128:8 * 128], np.cumsum(groups, axis=1).reshape(-1))       # inclusive add
    assert np.array_equal(got[11 * 128:12 * 128], a[np.arange(128) ^ 3])                      # shuffle xor 3
    assert np.array_equal(got[30 * 128:31 * 128], np.arange(128) % 16 + 1000 * (np.arange(128) // 16) + 800000)


@pytest.mark.slow
def test_coopmat2_decode_gives_the_python_api_bytes(programs, manifest, tmp_path):
    """A DecodeFunc tensor load (4-bit blocks, per-block scales staged in shared memory, the block
    read through its pointer) on the nvidia profile."""
    spv = ROOT / "tests" / "shaders" / "coopmat2" / "decode_q4.spv"
    R, C, row0, col0 = 32, 64, 0, 32
    rng = np.random.default_rng(22)
    groups = (R - row0) // 16
    q = rng.integers(0, 256, R * C // 2, dtype=np.uint8)
    scales = rng.uniform(-2, 2, 64 * groups).astype(np.float32)
    prm = np.array([R, C, row0, col0], np.uint32)
    o = np.zeros(512 * groups, np.float32)
    python_dispatch("nvidia", spv, (groups, 1, 1), {0: q, 1: scales, 2: o, 3: prm})
    out = _vkrun(programs, manifest, "nvidia", [
        ("q4", spv, (groups, 1, 1), [(0, 0, q, False), (1, 0, scales, False), (2, o.nbytes, None, True),
                                     (3, 0, prm, False)], None)], tmp_path)
    assert out["q4"][2] == o.tobytes()
    nib = np.stack([q & 15, q >> 4], axis=-1).reshape(R, C).astype(np.float32) - 8
    got = np.frombuffer(out["q4"][2], np.float32).reshape(groups, 16, 32)
    for wg in range(groups):
        rows = np.arange(16)[:, None] + row0 + 16 * wg
        cols = np.arange(32)[None, :] + col0
        scale = scales[wg * 64:(wg + 1) * 64][rows * (C // 32) + cols // 32]
        assert np.array_equal(got[wg], (nib[rows, cols] * scale).astype(np.float32))


@pytest.mark.slow
def test_cpp_example(manifest, tmp_path):
    """examples/vulkan_coopmat2 builds as its README says and passes its own check on the driver
    (C = A x B against the CPU product, edge tiles included)."""
    cxx = shutil.which(os.environ.get("CXX", "c++"))
    if cxx is None:
        pytest.skip("no C++ compiler")
    ex = ROOT / "examples" / "vulkan_coopmat2"
    subprocess.run([cxx, "-std=c++17", "-O2", f"-I{ROOT / 'jitcoop' / 'icd' / 'include'}", str(ex / "main.cpp"),
                    "-o", str(tmp_path / "tile_gemm"), "-lvulkan"], check=True, capture_output=True, text=True)
    p = run([tmp_path / "tile_gemm", ex / "tile_gemm.spv", 70, 50, 40], vk_env(manifest))
    assert validation_problems(p.stdout + p.stderr) == []
    assert "largest difference from the CPU product 0\nOK" in p.stdout


def test_spinning_shader_times_out(programs, manifest, tmp_path):
    """JITCOOP_ICD_TIMEOUT cancels a dispatch that never ends: the device is lost and the error
    (no messenger in vkrun) goes to stderr; the application does not hang."""
    spv = SHADERS / "spin.spv"
    (tmp_path / "push").write_bytes(struct.pack("<I", 0))
    (tmp_path / "cases.txt").write_text(f"case spin\nspv {spv}\npush push\nbind 0 16 - -\n")
    # no validation layer: vkrun frees the lost case's descriptor pool, which the layer (rightly)
    # calls a use of a busy object
    env = vk_env(manifest, validation=False)
    env["JITCOOP_ICD_TIMEOUT"] = "2"
    p = run([programs / "vkrun", "-t", TIMEOUT, tmp_path / "cases.txt"], env, check_rc=False)
    assert p.returncode == 2 and "case spin: FAILED vkWaitForFences: VK_ERROR_DEVICE_LOST" in p.stdout
    assert re.search(r"jitcoop Vulkan driver: error: device lost: vkCmdDispatch .*ran longer than its timeout of "
                     r"2\.0 s", p.stderr), p.stderr


@pytest.mark.parametrize("mode", ["lazy", "eager"])
def test_shader_the_profile_cannot_run(programs, manifest, tmp_path, mode):
    """qcom.spv (a 64-row QCOM conversion) on the nvidia profile, whose subgroups have 32
    invocations: jitcoop finds out when it compiles. Lazily, the first submit of a dispatch of it
    loses the device; with JITCOOP_ICD_COMPILE=eager, vkCreateComputePipelines fails. Either way the message names
    the instruction and the rule."""
    (tmp_path / "cases.txt").write_text(f"case q\nspv {SHADERS / 'qcom.spv'}\nbind 0 2048 - -\nbind 1 2048 - -\n"
                                        "bind 2 2048 - -\n")
    env = vk_env(manifest, "nvidia", validation=False)
    env["JITCOOP_ICD_COMPILE"] = mode
    p = run([programs / "vkrun", "-t", TIMEOUT, tmp_path / "cases.txt"], env, check_rc=False)
    failed = {"lazy": "FAILED vkQueueSubmit: VK_ERROR_DEVICE_LOST",
              "eager": "FAILED vkCreateComputePipelines: VK_ERROR_UNKNOWN"}
    assert failed[mode] in p.stdout, p.stdout[-3000:]
    assert re.search(r"%35 OpCompositeConstructCoopMatQCOM at byte 1732: a MatrixAKHR matrix may have at most "
                     r"SubgroupSize = 32 Rows", p.stderr), p.stderr


# -- portability diagnostics and robust buffer access (jitcoop.diagnostics) ---------------------------

PORTABILITY = ROOT / "tests" / "shaders" / "portability"


def test_portability_diagnostics_and_robustness(programs, manifest, tmp_path):
    """portability.c: a tensor load and store whose Pointer is 4 bytes past 16-byte alignment and
    an Undefined-clamped slice past the tensor run (as on the H100) and each instruction's rule
    reaches the messengers once, as a WARNING whose text names the pipeline, the instruction,
    the workgroup, the lane and the rule; the buffers are the Python API's. With
    robustBufferAccess2 an access past a binding reads zeros and writes nothing; a pipeline that
    disables robustness (VK_EXT_pipeline_robustness) loses the device."""
    p = run([programs / "portability", PORTABILITY, tmp_path], vk_env(manifest))
    before_loss = p.stdout.split("a lost device follows")[0]
    assert validation_problems(before_loss) == []
    ok = checks(p.stdout)
    assert set(ok) >= {"tensor_rules", "tensor_rules_again", "robust_access", "robust_access_disabled"}
    warned = re.findall(r"debug warning: VkPipeline 0x[0-9a-f]+: (.*?) workgroup \(0, 0, 0\) lane 0: \[([a-z-]+)\]",
                        p.stdout)
    # two messengers (the one chained to the instance and the one created) hear each message
    sites = {}
    for where, rule in warned:
        sites[(re.sub(r"^%\d+ ", "", where), rule)] = sites.get((re.sub(r"^%\d+ ", "", where), rule), 0) + 1
    assert {(w.split(" at byte")[0], r) for w, r in sites} == {
        ("OpCooperativeMatrixLoadTensorNV", "tensor-pointer-alignment"),
        ("OpCooperativeMatrixStoreTensorNV", "tensor-pointer-alignment"),
        ("OpCooperativeMatrixLoadTensorNV", "tensor-clamp-undefined"),
        ("OpCooperativeMatrixStoreTensorNV", "tensor-clamp-undefined")}
    assert set(sites.values()) == {2}
    assert p.stdout.index("tensor_rules run 1") > max(p.stdout.rindex(f"[{r}]") for _, r in warned)
    # the buffers: as the Python API leaves them (its warnings are test_portability.py's)
    ins = [np.fromfile(tmp_path / f"tensor_{b}.bin", np.uint32) for b in "xyzuv"]
    x = (np.arange(32 * 32 + 512) + 1).astype(np.float32).view(np.uint32)
    assert ins[0].tobytes() == x.tobytes()
    want = [x.copy(), np.zeros(256, np.uint32), np.full(272, 0x7FC0DEAD, np.uint32), np.zeros(256, np.uint32),
            np.full(32 * 32 + 512, 0x7FC0DEAD, np.uint32)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jitcoop.errors.JitcoopWarning)
        python_dispatch("nvidia", PORTABILITY / "tensor_rules.spv", (1, 1, 1), dict(enumerate(want)),
                        np.array([32, 32, 1, 1, 24, 24], np.uint32))
    for b, got, w in zip("xyzuv", ins, want):
        assert got.tobytes() == w.tobytes(), b
    # robust buffer access, invocations 32..63 past the 64-element bindings
    o = np.fromfile(tmp_path / "robust_o.bin", np.uint32).reshape(64, 2)
    np.testing.assert_array_equal(o[:, 0], np.where(np.arange(64) < 32, np.arange(64) + 33, 0))
    np.testing.assert_array_equal(o[:, 1], 0)
    w = np.fromfile(tmp_path / "robust_w.bin", np.uint32)
    np.testing.assert_array_equal(w, np.r_[np.full(32, 0x7FC0DEAD), 0xA0000000 + np.arange(32)].astype(np.uint32))
    np.testing.assert_array_equal(np.fromfile(tmp_path / "robust_a.bin", np.uint32), np.r_[np.zeros(32), np.ones(32)])
    assert re.search(r"debug error: device lost: vkCmdDispatch .*OpLoad at byte \d+ workgroup \(1, 0, 0\) lane 0: "
                     r"out-of-bounds access", p.stdout)


def test_portability_strict(programs, manifest, tmp_path):
    """JITCOOP_ICD_STRICT=1: the misaligned Pointer loses the device, with the rule's error."""
    env = vk_env(manifest, validation=False)
    env["JITCOOP_ICD_STRICT"] = "1"
    p = run([programs / "portability", PORTABILITY, tmp_path], env, check_rc=False)
    assert p.returncode == 1
    assert re.search(r"FAIL tensor_rules: result -4", p.stdout), p.stdout[-3000:]
    assert re.search(r"debug error: device lost: .*OpCooperativeMatrixLoadTensorNV at byte \d+ workgroup \(0, 0, 0\) "
                     r"lane 0: the Pointer of a tensor load must be 16-byte aligned", p.stdout)
    assert "debug warning: VkPipeline" not in p.stdout


def test_dumped_pipelines_run_through_the_python_api(programs, manifest, tmp_path):
    """JITCOOP_ICD_DUMP writes each pipeline as it is created (module, entry point, subgroup size,
    profile, specialization constants); its kernel through the Python API gives the driver's
    bytes. A folder that cannot be written leaves the application running, with one message."""
    a = np.random.default_rng(22).integers(-50, 50, 128).astype(np.int32)
    spv = CORE / "subgroups.spv"
    (tmp_path / "a.bin").write_bytes(a.tobytes())
    o = np.zeros(35 * 128, np.int32)
    (tmp_path / "cases.txt").write_text(f"case sg16\nspv {spv}\nsubgroup 16\nbind 0 0 a.bin -\n"
                                        f"bind 1 {o.nbytes} - o.bin\nbind 2 1024 - of.bin\n")
    env = dict(vk_env(manifest, "generic"), JITCOOP_ICD_DUMP=str(tmp_path / "dump"))
    p = run([programs / "vkrun", "-t", TIMEOUT, "-o", tmp_path, tmp_path / "cases.txt"], env)
    assert "case sg16: ok" in p.stdout
    (desc,) = (tmp_path / "dump").glob("*.json")
    d = json.loads(desc.read_text())
    assert (d["entry"], d["subgroup_size"], d["profile"]) == ("main", 16, "generic")
    assert (tmp_path / "dump" / d["module"]).read_bytes() == spv.read_bytes()
    from jitcoop.icd import dump as icd_dump
    k = icd_dump.kernel(desc)
    k.dispatch((1, 1, 1), {0: a, 1: o, 2: np.zeros(256, np.float32)})
    assert o.tobytes() == (tmp_path / "o.bin").read_bytes()
    (tmp_path / "file").write_text("")
    env["JITCOOP_ICD_DUMP"] = str(tmp_path / "file" / "dump")
    p = run([programs / "vkrun", "-t", TIMEOUT, "-o", tmp_path, tmp_path / "cases.txt"], env)
    assert "case sg16: ok" in p.stdout and p.stderr.count("JITCOOP_ICD_DUMP=") == 1
