#!/usr/bin/env python3
"""tools/dev bench: per model, compile and cmodel wall time, modelled cycles
against the roofline, and DDR bytes against the minimum, all from one run;
beside the cmodel's wall time per inference, ONNX Runtime's on the host CPU
(one thread) for the same ONNX file, the CPU peer.

Usage: bench.py BUILD_DIR [CONFIG...]: example config names (configs/examples),
one per model and dtype; the models' inputs must be generated under
BUILD_DIR/models and INT8 configs calibrated (tools/dev does). A model that fails to compile or
run is reported and the others still run; the exit status is then 1.

ONNX Runtime is onnxruntime-node under BUILD_DIR/ort (tools/dev bench installs
it with npm), run by tools/ort_bench.js with node. It runs the f32 ONNX file:
an f16/bf16/int8 config shows that f32 figure as a reference, marked so. When
node or onnxruntime-node is missing or fails, the reason is printed and the
benchmark goes on without it (the exit status does not change)."""
import json, os, shutil, subprocess, sys, time

build = sys.argv[1]
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
kiln = os.path.join(build, "tools", "kiln", "kiln")
# 64 lanes x conv pixels x input channels per cycle (firmware-abi chip.h).
MACS_PER_CYCLE = {"f32": 64 * 16 * 1, "f16": 64 * 4 * 32, "bf16": 64 * 4 * 32,
                  "int8": 64 * 4 * 64}
DDR_BYTES_PER_CYCLE = 62.277       # DDR->LMEM, 58 GiB/s at 1 GHz

class Failed(Exception):
    pass


def step(what, args):
    """Runs one kiln command; Failed with its first error line if it fails."""
    p = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        first = next((l for l in lines if "error" in l), lines[0] if lines else "")
        raise Failed("%s failed (exit %d): %s" % (what, p.returncode, first.strip()))


def config_field(path, key):
    for line in open(path):
        if line.startswith(key + ":"):
            return line.split(":", 1)[1].strip()
    return ""


ORT_RUNS = 10
_ort_cache = {}


def ort_time(onnx_path, input_npz, reference_npz):
    """(result dict of ort_bench.js, None) or (None, why not), once per ONNX file."""
    key = os.path.realpath(onnx_path)
    if key in _ort_cache:
        return _ort_cache[key]
    modules = os.path.join(build, "ort", "node_modules")
    node = shutil.which("node")
    if not node:
        result = (None, "node not found (tools/dev installs nodejs)")
    elif not os.path.isdir(os.path.join(modules, "onnxruntime-node")):
        result = (None, f"onnxruntime-node not installed in {os.path.dirname(modules)}"
                        " (tools/dev bench installs it with npm)")
    else:
        args = [node, os.path.join(root, "tools", "ort_bench.js"), onnx_path, input_npz,
                "--runs", str(ORT_RUNS)]
        if os.path.isfile(reference_npz):
            args += ["--reference", reference_npz]
        try:
            p = subprocess.run(args, capture_output=True, text=True, timeout=900,
                               env=dict(os.environ, NODE_PATH=modules))
            if p.returncode != 0:
                lines = [l for l in p.stderr.splitlines() if l.strip()]
                result = (None, "ort_bench.js failed (exit %d): %s" % (
                    p.returncode, lines[0].strip() if lines else "no message"))
            else:
                result = (json.loads(p.stdout.strip().splitlines()[-1]), None)
        except (OSError, subprocess.TimeoutExpired, ValueError, IndexError) as e:
            result = (None, f"ort_bench.js failed: {e}")
    _ort_cache[key] = result
    return result


summary = []  # (name, dtype, modelled/roofline, cmodel ms, ORT ms or None, ORT note)


def profile(bmodel):
    """Per group of `kiln inspect --profile`: cycles, engine busy cycles, bound."""
    text = subprocess.run([kiln, "inspect", bmodel, "--profile"], check=True,
                          capture_output=True, text=True).stdout
    groups = []
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 10 and f[0].isdigit():
            groups.append({"group": int(f[0]), "ops": int(f[1]), "cycles": int(f[2]),
                           "tiu": int(f[3]), "gdma": int(f[4]), "bound": f[5],
                           "conflicts": int(f[8]), "conflict_cycles": int(f[9]),
                           "first": f[10] if len(f) > 10 else ""})
    return groups


def bench(name):
    out = os.path.join(build, "out")
    os.makedirs(out, exist_ok=True)
    bm = os.path.join(out, name + ".bench.bmodel")
    config = os.path.join(root, "configs", "examples", name + ".yaml")
    dtype = config_field(config, "quantize") or "f32"
    onnx_path = os.path.normpath(os.path.join(os.path.dirname(config), config_field(config, "model")))
    model = os.path.basename(os.path.dirname(onnx_path))
    t0 = time.time()
    step("compile", [kiln, "compile", config, "-o", bm, "--no-verify"])
    t1 = time.time()
    stats = os.path.join(out, name + ".bench.json")
    input_npz = os.path.join(build, "models", model, "input.npz")
    step("run", [kiln, "run", bm, "--input", input_npz,
                 "--output", os.path.join(out, name + ".bench.npz"), "--stats", stats])
    t2 = time.time()
    s = json.load(open(stats))
    info = json.loads(subprocess.run([kiln, "inspect", bm, "--json"], check=True,
                                     capture_output=True, text=True).stdout)
    net = info["nets"][0]
    roof = max(net["macs"] / MACS_PER_CYCLE[dtype], net["min_ddr_bytes"] / DDR_BYTES_PER_CYCLE)
    print(f"{name} ({dtype}):")
    print(f"  compile time        {1000 * (t1 - t0):10.0f} ms")
    print(f"  cmodel wall time    {1000 * (t2 - t1):10.0f} ms (run {s['wall_ms']:.0f} ms)")
    ort, why = ort_time(onnx_path, input_npz, os.path.join(build, "models", model, "reference.npz"))
    print(f"  cmodel per inference {s['wall_ms']:9.1f} ms (kiln run wall_ms)")
    if ort:
        cos = ", ".join(f"cosine {v:.6f}" for v in (ort.get("cosine") or {}).values() if v is not None)
        what = "f32 ONNX" if dtype == "f32" else f"f32 ONNX, a reference: ORT runs no {dtype}"
        print(f"  ONNX Runtime CPU    {ort['median_ms']:10.1f} ms ({what}; onnxruntime-node "
              f"{ort['onnxruntime_node']}, 1 thread, median of {ort['runs']}"
              f"{'' if ort.get('optimization', 'all') == 'all' else ', graph optimization ' + ort['optimization']}"
              f"{'; vs PyTorch ' + cos if cos else ''})")
        print(f"  cmodel / ORT        {s['wall_ms'] / ort['median_ms']:10.1f}x"
              f"{'' if dtype == 'f32' else ' (against the f32 ORT figure)'}")
    else:
        print(f"  ONNX Runtime CPU    skipped: {why}")
    print(f"  modelled cycles     {s['cycles']:10d}  (TIU busy {s['tiu_cycles']}, GDMA busy "
          f"{s['gdma_cycles']}: the engines overlap "
          f"{max(0, s['tiu_cycles'] + s['gdma_cycles'] - s['cycles'])} cycles)")
    print(f"  roofline cycles     {roof:10.0f}  -> modelled/roofline {s['cycles'] / roof:.2f}x")
    groups = profile(bm)
    if groups:
        print("  costliest groups (kiln inspect --profile):")
        for g in sorted(groups, key=lambda g: -g["cycles"])[:5]:
            print(f"    group {g['group']:3d} {g['cycles']:9d} cycles, TIU {g['tiu']:9d}, GDMA {g['gdma']:9d}, "
                  f"{g['bound']:7} {g['conflicts']:3d} bank conflicts ({g['conflict_cycles']} cycles), "
                  f"{g['ops']:3d} ops from {g['first']}")
    print(f"  DDR bytes           {s['ddr_bytes']:10d}")
    print(f"  minimum DDR bytes   {net['min_ddr_bytes']:10d}  -> ratio {s['ddr_bytes'] / net['min_ddr_bytes']:.2f}x")
    plan = net["activation_plan"]
    print(f"  activation bytes    {plan['planned_bytes']:10d}  largest live set {plan['live_peak_bytes']}"
          f" -> ratio {plan['planned_bytes'] / max(plan['live_peak_bytes'], 1):.2f}x"
          f" (without sharing {plan['unplanned_bytes']})")
    movers = [g for g in net["groups"] if g["tiu_count"] == 0]
    print(f"  data-movement groups {len(movers):9d}  of {len(net['groups'])} groups")
    summary.append((name, dtype, s["cycles"] / roof, s["wall_ms"],
                    ort["median_ms"] if ort else None, "" if dtype == "f32" or not ort else "f32 ref"))

# tools/dev bench passes its list (it generates those models first).
MODELS = sys.argv[2:] or ["resnet_style", "mobilenet_v2", "unet_seg", "detect_head"]
failed = []
for model in MODELS:
    try:
        bench(model)
    except Failed as e:  # report it and go on with the other models
        print(f"{model}: {e}")
        failed.append(model)
if summary:
    print("\nsummary: modelled/roofline cycles; wall ms per inference of the cmodel and of"
          " ONNX Runtime (CPU, 1 thread, f32 ONNX; 'f32 ref' beside another dtype)")
    print(f"  {'config':30} {'dtype':5} {'mod/roof':>8} {'cmodel ms':>10} {'ORT ms':>8} {'cmodel/ORT':>10}")
    for name, dtype, roofx, cm, ort, note in summary:
        o = f"{ort:8.1f} {cm / ort:9.0f}x" if ort else f"{'-':>8} {'-':>10}"
        print(f"  {name:30} {dtype:5} {roofx:7.2f}x {cm:10.1f} {o} {note}".rstrip())
if failed:
    print("bench: failed for " + ", ".join(failed))
    sys.exit(1)
