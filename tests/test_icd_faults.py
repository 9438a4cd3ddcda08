"""Faults in jitcoop's Vulkan driver: each ends in a Vulkan error code, never in an abort from
inside the driver, and a failed dispatch leaves the application's memory as it was.

tests/icd/faults.c runs each case through the real Vulkan loader, under the driver's settings
(JITCOOP_ICD_FAULTS injects a fault, jitcoop.icd.faults; JITCOOP_ICD_HEAP, JITCOOP_ICD_COMPILE_TIMEOUT
are the real limits). References: the VkResult values of the Vulkan specification
(VK_ERROR_OUT_OF_DEVICE_MEMORY -2, VK_ERROR_DEVICE_LOST -4, VK_ERROR_UNKNOWN -13), the heap sizes
worked out by hand, and the C program's own CPU reference of ids.spv's output. The threads case
runs under the Khronos validation layer, whose thread-safety checks would name a command used
on an object another thread holds.
"""
import ctypes.util
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from test_icd import HERE, SHADERS, TIMEOUT, checks, manifest, run, validation_problems, vk_env  # noqa: F401
from conftest import sigint_default

pytestmark = pytest.mark.skipif(ctypes.util.find_library("vulkan") is None or shutil.which("cc") is None,
                                reason="needs the Vulkan loader (libvulkan1, libvulkan-dev) and a C compiler")

OUT_OF_DEVICE_MEMORY, DEVICE_LOST, UNKNOWN = -2, -4, -13
PROMPT = 60                 # seconds: a process that takes longer to exit hangs


@pytest.fixture(scope="module")
def faults_program(tmp_path_factory, manifest):     # noqa: F811
    out = tmp_path_factory.mktemp("icd_faults") / "faults"
    inc = str(HERE.parent.parent / "jitcoop" / "icd" / "include")
    subprocess.run([os.environ.get("CC", "cc"), "-O1", "-std=c11", "-Wall", "-Wextra", "-Werror",
                    "-Wno-missing-field-initializers", f"-I{inc}", str(HERE / "faults.c"), "-o", str(out),
                    "-lvulkan", "-lpthread"], check=True, capture_output=True, text=True)
    return out


def faults_env(manifest, validation=False, **settings):     # noqa: F811
    """The driver alone, with these JITCOOP_ICD_* settings (threads=2: JITCOOP_ICD_THREADS=2) and no others."""
    env = vk_env(manifest, validation=validation)
    for k in ("JITCOOP_ICD_FAULTS", "JITCOOP_ICD_HEAP", "JITCOOP_ICD_COMPILE", "JITCOOP_ICD_COMPILE_TIMEOUT",
              "JITCOOP_ICD_THREADS", "JITCOOP_ICD_TIMEOUT"):
        env.pop(k, None)
    env.update({f"JITCOOP_ICD_{k.upper()}": str(v) for k, v in settings.items()})
    return env


def no_abort(p):
    """Nothing aborted or crashed on the way out."""
    text = p.stdout + p.stderr
    for sign in ("Fatal Python error", "Aborted", "core dumped", "Segmentation fault", "From cffi callback",
                 "Traceback"):
        assert sign not in text, text[-3000:]


def lines(output: str, prefix: str) -> list:
    return [ln for ln in output.splitlines() if ln.startswith(prefix)]


# -- every entry point ---------------------------------------------------------------------------------

# commands whose replacement returns a str: one of each result kind (VkResult, a value, a pointer)
WRONG_TYPE = ("vkCreateFence", "vkGetBufferDeviceAddress", "vkGetDeviceProcAddr")

GUARD_SCRIPT = f"WRONG_TYPE = {WRONG_TYPE!r}\n" + textwrap.dedent("""
    import ctypes, sys
    from jitcoop import icd
    from jitcoop.icd import entry, vk
    from jitcoop.icd import (commands, coopvec, debug, descriptors, device, instance, memory, physical,
                             pipelines, queries, queue)

    class Boom(RuntimeError):
        pass

    def boom(*args):
        raise Boom("raised on purpose")

    def no_memory(*args):
        raise MemoryError

    def wrong_type(*args):
        return "not a C value"

    implemented = sorted(vk.COMMANDS)
    for name in implemented:
        vk.COMMANDS[name] = boom
    vk.COMMANDS["vkCreateBuffer"] = no_memory
    for name in WRONG_TYPE:
        vk.COMMANDS[name] = wrong_type
    # the library's first call starts the driver (this interpreter's modules, patched above)
    ctypes.CDLL(str(icd.LIBRARY)).vk_icdNegotiateLoaderICDInterfaceVersion(ctypes.byref(ctypes.c_uint32(5)))
    mod = sys.modules["jitcoop.icd._vulkan"]
    ffi, lib = mod.ffi, mod.lib
    print("implemented", " ".join(implemented))
    for i in range(len(lib.jc_commands)):
        name = ffi.string(lib.jc_commands[i].name).decode()
        fn = getattr(lib, "jc_" + name)
        t = ffi.typeof(fn)
        r = fn(*[ffi.NULL if a.kind == "pointer" else 0 for a in t.args])
        kind = ("VkResult" if t.result is ffi.typeof("VkResult") else "void" if t.result.kind == "void"
                else "pointer" if t.result.kind in ("pointer", "function") else "value")
        shown = r if kind in ("VkResult", "value") else "null" if kind == "pointer" and r == ffi.NULL else r
        print("command", name, kind, shown)
    entry.instance_proc_addr = entry.physical_device_proc_addr = boom
    print("icd negotiate", lib.jc_icd_negotiate(ffi.NULL))
    print("icd instance_proc_addr", lib.jc_icd_get_instance_proc_addr(ffi.NULL, b"vkCreateInstance") == ffi.NULL)
    print("icd physical_device_proc_addr",
          lib.jc_icd_get_physical_device_proc_addr(ffi.NULL, b"vkCreateDevice") == ffi.NULL)
""")


def test_every_entry_point_turns_an_exception_into_a_result(manifest):    # noqa: F811
    """Every command the library exports, its implementation replaced by one that raises (or
    returns a value of the wrong type): each returns VK_ERROR_UNKNOWN (VK_ERROR_OUT_OF_HOST_MEMORY
    for a MemoryError; an unsupported command its VK_ERROR_FEATURE_NOT_PRESENT), NULL or 0, and
    says so on stderr; no exception reaches cffi's own handler (which prints "From cffi
    callback" and returns 0, VK_SUCCESS)."""
    p = subprocess.run([sys.executable, "-c", GUARD_SCRIPT], capture_output=True, text=True, timeout=TIMEOUT,
                       env=vk_env(manifest, validation=False))
    assert p.returncode == 0, p.stderr[-3000:]
    assert "From cffi callback" not in p.stderr
    implemented = set(lines(p.stdout, "implemented")[0].split()[1:])
    results = {ln.split()[1]: ln.split()[2:] for ln in lines(p.stdout, "command ")}
    assert len(results) > 250 and len(implemented) > 100
    for name, (kind, value) in results.items():
        base = name[:-3] if name.endswith(("KHR", "EXT")) and name[:-3] in implemented else name
        want = {"VkResult": str(-1 if base == "vkCreateBuffer" else UNKNOWN if base in implemented else -8),
                "void": "None", "pointer": "null", "value": "0"}[kind]
        assert value == want, (name, kind, value)
        if base in WRONG_TYPE:
            assert f"error: {name}: internal error in jitcoop's Vulkan driver: its result cannot be returned" \
                in p.stderr, name
        elif base in implemented and base != "vkCreateBuffer":
            assert f"error: {name}: internal error in jitcoop's Vulkan driver: Boom: raised on purpose" in p.stderr
    assert "error: vkCreateBuffer: out of host memory" in p.stderr
    assert lines(p.stdout, "icd ") == [f"icd negotiate {UNKNOWN}", "icd instance_proc_addr True",
                                       "icd physical_device_proc_addr True"]


# -- memory ------------------------------------------------------------------------------------------

def test_allocations_past_the_heap_fail_and_the_application_goes_on(faults_program, manifest):    # noqa: F811
    """A 64 MiB heap (JITCOOP_ICD_HEAP=64M), the first allocation failed by injection: then two
    thirds (and a byte each) fit and the third does not, nor does the heap plus a byte;
    VK_EXT_memory_budget says so (the heap's budget, two thirds used); freeing one makes room
    again, and a dispatch still runs right."""
    p = run([faults_program, "alloc", SHADERS], faults_env(manifest, heap="64M", faults="alloc:1"))
    no_abort(p)
    assert lines(p.stdout, "heap ") == [f"heap {64 << 20}"]
    assert lines(p.stdout, "alloc ") == [f"alloc injected {OUT_OF_DEVICE_MEMORY} handle null",
                                         f"alloc thirds 0 0 {OUT_OF_DEVICE_MEMORY} handle null",
                                         f"alloc past heap {OUT_OF_DEVICE_MEMORY}",
                                         "alloc after free 0"]
    assert lines(p.stdout, "dispatch after ") == ["dispatch after 0 correct"]
    third = (64 << 20) // 3 + 1
    assert lines(p.stdout, "budget ") == [f"budget {64 << 20} usage {2 * third}"]
    assert f"debug error: vkAllocateMemory: {third} bytes: the heap of {64 << 20} bytes has " \
           f"{(64 << 20) - 2 * third} left" in p.stdout
    assert "debug error: vkAllocateMemory: 4096 bytes: injected fault (alloc, JITCOOP_ICD_FAULTS)" in p.stdout


# -- a dispatch that fails ------------------------------------------------------------------------------

# the messages' beginnings: lost at the submit that compiles, or while the dispatch runs
LOST_AT_SUBMIT = r"device lost: vkQueueSubmit: VkCommandBuffer 0x[0-9a-f]+: VkPipeline 0x[0-9a-f]+ " \
                 r"\(entry point 'main'\) "
LOST_RUNNING = r"device lost: vkCmdDispatch \(command 3 of VkCommandBuffer 0x[0-9a-f]+\): VkPipeline 0x[0-9a-f]+ "


@pytest.mark.parametrize("fault, submit, message", [
    ("compile:1", DEVICE_LOST,
     LOST_AT_SUBMIT + r"cannot be compiled: injected fault \(compile, JITCOOP_ICD_FAULTS\)"),
    ("compile_timeout:1", DEVICE_LOST,
     LOST_AT_SUBMIT + r"cannot be compiled: compiling 'main' \(injected fault \(compile_timeout, "
                      r"JITCOOP_ICD_FAULTS\)\) took longer than its limit of 0\.5 s"),
    ("worker:1", 0, LOST_RUNNING + r"\(entry point 'main'\): injected fault: a dispatch thread raised after running "
                                   "its workgroups; the buffers were restored"),
])
def test_a_failed_dispatch_loses_its_device_only(faults_program, manifest, fault, submit, message):    # noqa: F811
    """The first dispatch of device A fails: its compile fails or never ends (the vkQueueSubmit
    that needs it returns VK_ERROR_DEVICE_LOST), or a thread of the running dispatch raises (the
    fence wait does). Every later submit returns VK_ERROR_DEVICE_LOST, the output buffer keeps
    its fill pattern (a worker that raised had written it: restored), and a second device B
    runs the same dispatch to the CPU's results."""
    env = faults_env(manifest, faults=fault, threads=2, compile_timeout=0.5)
    p = run([faults_program, "dispatch", SHADERS], env)
    no_abort(p)
    assert lines(p.stdout, "device ") == [
        f"device A: pipeline 0 submit {submit} wait {DEVICE_LOST} buffer untouched later submit {DEVICE_LOST}",
        "device B: pipeline 0 submit 0 wait 0 buffer correct later submit 0"]
    assert re.search("debug error: " + message, p.stdout), p.stdout[-3000:]


def test_a_compile_fault_in_a_secondary_command_buffer_fails_the_submit(faults_program, manifest):    # noqa: F811
    """The dispatch recorded in a secondary command buffer, which a primary one executes: the
    submit of the primary compiles it, and fails."""
    p = run([faults_program, "dispatch", SHADERS, "secondary"], faults_env(manifest, faults="compile:1"))
    no_abort(p)
    assert lines(p.stdout, "device ") == [
        f"device A: pipeline 0 submit {DEVICE_LOST} wait {DEVICE_LOST} buffer untouched later submit {DEVICE_LOST}",
        "device B: pipeline 0 submit 0 wait 0 buffer correct later submit 0"]
    assert re.search("debug error: " + LOST_AT_SUBMIT + "cannot be compiled: injected fault", p.stdout)


def test_a_compile_past_the_time_limit_loses_the_device(faults_program, manifest, tmp_path):    # noqa: F811
    """JITCOOP_ICD_COMPILE_TIMEOUT=0.001 and an empty kernel cache: the compile (in its child
    process) is stopped at the limit, and each device's first submit loses it."""
    env = faults_env(manifest, compile_timeout=0.001)
    env["JITCOOP_CACHE_DIR"] = str(tmp_path / "cache")
    p = run([faults_program, "dispatch", SHADERS], env)
    no_abort(p)
    for dev in "AB":
        assert f"device {dev}: pipeline 0 submit {DEVICE_LOST} wait {DEVICE_LOST} buffer untouched " \
               f"later submit {DEVICE_LOST}" in p.stdout
    assert "compiling entry point 'main' took longer than its limit of 0.001 s" in p.stdout


def test_an_eager_compile_fault_fails_pipeline_creation(faults_program, manifest):    # noqa: F811
    """With JITCOOP_ICD_COMPILE=eager the injected compile fault fails vkCreateComputePipelines
    (VK_ERROR_UNKNOWN, the pipeline VK_NULL_HANDLE); the device itself stays usable, and so
    does a second one."""
    p = run([faults_program, "dispatch", SHADERS], faults_env(manifest, compile="eager", faults="compile:1"))
    no_abort(p)
    assert lines(p.stdout, "device ") == [
        f"device A: pipeline {UNKNOWN} submit 1 wait 1 buffer untouched later submit 0",
        "device B: pipeline 0 submit 0 wait 0 buffer correct later submit 0"]
    assert "debug error: vkCreateComputePipelines (pipeline 0): VkPipeline" in p.stdout


@pytest.mark.parametrize("threads", [1, 2])
def test_worker_fault_through_the_python_api(threads):
    """The runtime's injection point alone (on the worker thread, or on the dispatching thread
    when it runs alone): the dispatch raises WorkerFault and the bound array keeps its contents,
    though the threads had run every workgroup."""
    import jitcoop
    from jitcoop.runtime import faults
    k = jitcoop.Device("nvidia").load(SHADERS / "ids.spv").kernel("main")
    width, grid = 256, (64, 32, 1)
    out = np.full((grid[1] * 2, width, 4), 0xA5A5A5A5, np.uint32)
    faults.arm_worker()
    with pytest.raises(faults.WorkerFault):
        k.dispatch(grid, {0: out}, push=np.uint32(width).tobytes(), threads=threads)
    assert (out == 0xA5A5A5A5).all()
    k.dispatch(grid, {0: out}, push=np.uint32(width).tobytes(), threads=threads)      # disarmed: runs
    gy, gx = np.mgrid[0:grid[1] * 2, 0:width]
    assert np.array_equal(out, np.stack([gx // 4, gy // 2, 0 * gx, gx + 1000 * gy], -1).astype(np.uint32))


# -- threads -----------------------------------------------------------------------------------------------

def test_several_threads_record_and_submit(faults_program, manifest):    # noqa: F811
    """Four threads record command buffers from their own pools and submit them to one queue
    under a mutex, a fifth calls vkQueueWaitIdle meanwhile: every result matches the CPU's, and
    the validation layer (its thread-safety checks) says nothing."""
    p = run([faults_program, "threads", SHADERS], faults_env(manifest, validation=True, threads=2))
    assert validation_problems(p.stdout + p.stderr) == []
    ok = checks(p.stdout)
    assert set(ok) == {"thread", "wait_idle"} and len(lines(p.stdout, "ok thread")) == 4
    no_abort(p)


# -- exit with work in flight ---------------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["exit", "done"])
def test_exit_with_work_in_flight(faults_program, manifest, how):    # noqa: F811
    """exit(7) while a dispatch that never ends runs on every dispatch thread ("exit"), or
    main's return after a finished dispatch with nothing destroyed and no vkDeviceWaitIdle
    ("done"): the process ends at once with its own status, nothing aborts at exit."""
    p = subprocess.run([str(faults_program), "exit", str(SHADERS), how], capture_output=True, text=True,
                       timeout=PROMPT, env=faults_env(manifest, threads=2))
    assert p.returncode == 7, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    assert ("in flight 1" if how == "exit" else "done 0 correct") in p.stdout
    no_abort(p)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_killed_with_work_in_flight(faults_program, manifest, sig):    # noqa: F811
    """A signal while a dispatch that never ends runs: the process dies of that signal (the
    driver installs no handler of its own: SIGINT too ends an application that has none),
    promptly and without a core dump."""
    proc = subprocess.Popen([str(faults_program), "exit", str(SHADERS), "wait"], preexec_fn=sigint_default,
                            stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=faults_env(manifest, threads=2))
    try:
        first = proc.stdout.readline()
        assert first == "in flight 1\n", first
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=PROMPT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -sig, (proc.returncode, err[-2000:])
    assert "Fatal Python error" not in err and "Traceback" not in err


# -- the settings ---------------------------------------------------------------------------------------------

def test_fault_and_size_settings_parse(monkeypatch):
    from jitcoop.icd import config, faults
    F = faults.Fault
    assert faults.parse("alloc:3, worker,compile_timeout:1") == (F("alloc", 3), F("worker", None),
                                                                 F("compile_timeout", 1))
    for bad, why in (("nope", "unknown fault point 'nope'"), ("alloc:0", "N must be a whole number"),
                     ("compile:x", "N must be a whole number")):
        with pytest.raises(faults.FaultsError, match=why):
            faults.parse(bad)
    for text, size in (("100", 100), ("64M", 64 << 20), ("2g", 2 << 30), ("16K", 16 << 10)):
        monkeypatch.setenv("JITCOOP_ICD_HEAP", text)
        assert config.load().heap == size
    for bad in ("-1", "12X", "M"):
        monkeypatch.setenv("JITCOOP_ICD_HEAP", bad)
        with pytest.raises(config.ConfigError, match="JITCOOP_ICD_HEAP"):
            config.load()
    monkeypatch.delenv("JITCOOP_ICD_HEAP")
    monkeypatch.setenv("JITCOOP_ICD_FAULTS", "alloc:two")
    with pytest.raises(config.ConfigError, match="JITCOOP_ICD_FAULTS"):
        config.load()


def test_a_bad_fault_setting_fails_vkcreateinstance(faults_program, manifest):    # noqa: F811
    """The driver refuses the instance (VK_ERROR_INITIALIZATION_FAILED, which the loader, finding
    no other driver, returns as VK_ERROR_INCOMPATIBLE_DRIVER, -9) and says why."""
    p = run([faults_program, "alloc", SHADERS], faults_env(manifest, faults="alloc:0"), check_rc=False)
    assert p.returncode == 2 and "vkCreateInstance(&ici, NULL, &inst) returned -9" in p.stdout
    assert "JITCOOP_ICD_FAULTS: 'alloc:0': N must be a whole number from 1" in p.stdout + p.stderr
    no_abort(p)
