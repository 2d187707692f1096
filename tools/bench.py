#!/usr/bin/env python3
"""tools/dev bench: per model, compile and cmodel wall time, modelled cycles
against the roofline, and DDR bytes against the minimum, all from one run.

Usage: bench.py BUILD_DIR [CONFIG...]: example config names (configs/examples),
one per model and dtype; the models' inputs must be generated under
BUILD_DIR/models and INT8 configs calibrated (tools/dev does). A model that fails to compile or
run is reported and the others still run; the exit status is then 1."""
import json, os, subprocess, sys, time

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


def bench(name):
    out = os.path.join(build, "out")
    os.makedirs(out, exist_ok=True)
    bm = os.path.join(out, name + ".bench.bmodel")
    config = os.path.join(root, "configs", "examples", name + ".yaml")
    dtype = config_field(config, "quantize") or "f32"
    model = os.path.basename(os.path.dirname(config_field(config, "model")))
    t0 = time.time()
    step("compile", [kiln, "compile", config, "-o", bm, "--no-verify"])
    t1 = time.time()
    stats = os.path.join(out, name + ".bench.json")
    step("run", [kiln, "run", bm, "--input", os.path.join(build, "models", model, "input.npz"),
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
    print(f"  modelled cycles     {s['cycles']:10d}")
    print(f"  roofline cycles     {roof:10.0f}  -> modelled/roofline {s['cycles'] / roof:.2f}x")
    print(f"  DDR bytes           {s['ddr_bytes']:10d}")
    print(f"  minimum DDR bytes   {net['min_ddr_bytes']:10d}  -> ratio {s['ddr_bytes'] / net['min_ddr_bytes']:.2f}x")
    plan = net["activation_plan"]
    print(f"  activation bytes    {plan['planned_bytes']:10d}  largest live set {plan['live_peak_bytes']}"
          f" -> ratio {plan['planned_bytes'] / max(plan['live_peak_bytes'], 1):.2f}x"
          f" (without sharing {plan['unplanned_bytes']})")
    movers = [g for g in net["groups"] if g["tiu_count"] == 0]
    print(f"  data-movement groups {len(movers):9d}  of {len(net['groups'])} groups")

# tools/dev bench passes its list (it generates those models first).
MODELS = sys.argv[2:] or ["resnet_style", "mobilenet_v2", "unet_seg", "detect_head"]
failed = []
for model in MODELS:
    try:
        bench(model)
    except Failed as e:  # report it and go on with the other models
        print(f"{model}: {e}")
        failed.append(model)
if failed:
    print("bench: failed for " + ", ".join(failed))
    sys.exit(1)
