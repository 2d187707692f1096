#!/usr/bin/python3
"""ONNX conformance runner: kiln against the ONNX backend test data.

Walks the backend test data of Debian's libonnx-testdata
(/usr/share/libonnx-testdata/data/{node,pytorch-converted,pytorch-operator}).
For every test it loads model.onnx and decides whether kiln can take it; a
test that needs something kiln does not take is SKIPPED with the reason (see
`prepare` and the summary). Every other test is compiled with a generated
deployment config (`kiln compile`), run on the cmodel (`kiln run`) and
compared with the stored outputs of test_data_set_0 (`kiln compare` plus an
element-wise check, see ACCEPTANCE below). A test that fails at any stage is
a FAILURE: the runner never turns an error into a pass.

Output: one line per failure, the skip reasons grouped with counts, the
failures grouped by cause, then a last line exactly
`N passed, N failed, N skipped`. Exit status 1 iff an applicable test
failed (2 on a usage error).

Which operators kiln takes is read from one place, SUPPORTED_OPS below: it
mirrors the ONNX importer (compiler/lib/Frontend/Onnx). Tests with an op
outside it are skipped up front. The two are kept in sync in both directions:
  * an op in SUPPORTED_OPS that the kiln binary does not take yet fails
    compilation with "unsupported operator" (or an attribute value with
    "attribute ... is not supported", or "... not supported yet"); the runner
    reports that as a SKIP with kiln's message as the reason, never as a pass;
  * an op the importer's source dispatches on that SUPPORTED_OPS lacks is
    printed as a warning (those tests would be skipped for no reason).

Constant operands (--freeze, on by default). kiln holds shape-like operands
as compile-time constants (Reshape's shape, Slice's starts/ends, Gather's
indices, Clip's min/max, Resize's scales, ...: see CONST_OPERANDS), as they
are in every exported model, while the backend tests feed them as graph
inputs. A graph input that only feeds such operand slots is turned into an
initializer holding the test's own input data; the computation and its
expected outputs are unchanged. Without --freeze (--no-freeze) those tests
are skipped for their non-float / shape inputs instead. The summary says how
many tests had inputs frozen.

ACCEPTANCE of one output (the reference is the stored output_N.pb):
  * same shape, and
  * either  (a) `kiln compare --tolerance 0.99999,0.999` passes for it
                (cosine >= 0.99999 and euclidean similarity
                1 - |a-b|/|(a+b)/2| >= 0.999) AND
                max_abs <= MAX_ABS_RTOL * max|ref| + ATOL (no single element
                far off, which an L2 measure over a big tensor could hide),
        or  (b) every element satisfies |out - ref| <= ATOL + RTOL * |ref|
                (numpy.allclose, NaN equal to NaN, inf to the same inf):
                for all-zero and tiny outputs cosine is undefined or
                meaningless (kiln compare calls two all-zero tensors
                similar, an all-zero against a 1e-9 tensor not), and for
                outputs with Inf/NaN, which kiln compare always fails.
  RTOL = 1e-3 is the ONNX backend suite's own default rtol; ATOL = 1e-5
  instead of its 1e-7, as kiln computes in f32 (f32 rounding of O(1)
  values is ~1e-7 per operation).

Run it with /usr/bin/python3 (it needs onnx and numpy).
"""
import argparse
import collections
import concurrent.futures
import glob
import json
import math
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import onnx
from onnx import numpy_helper, shape_inference

DATA_ROOT = "/usr/share/libonnx-testdata/data"
SUITES = ["node", "pytorch-converted", "pytorch-operator"]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MIN_COS, MIN_EUCLID = 0.99999, 0.999
ISA = "kiln"  # --isa: what the bmodels carry
RTOL, ATOL = 1e-3, 1e-5
MAX_ABS_RTOL = 1e-3

# The ONNX operators (default domain) kiln's importer takes: issue 3's set.
# Mirrors compiler/lib/Frontend/Onnx; see the module docstring for how the
# two are kept in sync.
SUPPORTED_OPS = frozenset("""
    Conv ConvTranspose Gemm MatMul
    Add Sub Mul Div Pow Max Min Sum
    Relu LeakyRelu PRelu Sigmoid Tanh HardSigmoid HardSwish Elu Selu Softplus Mish
    Erf Exp Log Sqrt Reciprocal Abs Neg Clip Softmax LogSoftmax
    ReduceSum ReduceMean ReduceMax ReduceMin ReduceL2 ReduceSumSquare
    Reshape Flatten Squeeze Unsqueeze Transpose Concat Split Slice Gather
    Expand Tile Pad Resize Upsample
    MaxPool AveragePool GlobalAveragePool GlobalMaxPool
    BatchNormalization InstanceNormalization
    Cast Identity Dropout Constant ConstantOfShape Shape Range Where Equal
""".split())

# Operand slots (input indices) kiln takes only as compile-time constants.
CONST_OPERANDS = {
    "Reshape": {1}, "Expand": {1}, "Tile": {1}, "Slice": {1, 2, 3, 4},
    "Gather": {1}, "Pad": {1, 2, 3}, "Resize": {1, 2, 3}, "Upsample": {1},
    "Squeeze": {1}, "Unsqueeze": {1}, "Split": {1}, "ReduceSum": {1},
    "ReduceMean": {1}, "ReduceMax": {1}, "ReduceMin": {1}, "ReduceL2": {1},
    "ReduceSumSquare": {1}, "Clip": {1, 2}, "Dropout": {1, 2},
    "ConstantOfShape": {0}, "Range": {0, 1, 2}, "Where": {0},
}

CONTROL_FLOW_OPS = {"If", "Loop", "Scan", "SequenceMap"}
RANDOM_OPS = {"RandomNormal", "RandomNormalLike", "RandomUniform",
              "RandomUniformLike", "Multinomial", "Bernoulli"}
CONV_POOL_OPS = {"Conv", "ConvTranspose", "MaxPool", "AveragePool",
                 "GlobalAveragePool", "GlobalMaxPool", "LpPool",
                 "GlobalLpPool", "MaxUnpool", "MaxRoiPool"}

# A kiln compile error of one of these forms means "kiln does not take this
# (yet)": the test is skipped with kiln's message as the reason.
KILN_UNSUPPORTED = re.compile(
    r"unsupported operator|attribute .* is not supported|not supported yet")

KILN_UNSUPPORTED_OP = "kiln: unsupported operator (in SUPPORTED_OPS, not in this kiln yet)"
OUTSIDE_SET = "operator outside kiln's set"

SUBPROCESS_TIMEOUT = 300  # seconds, per kiln invocation


class Skip(Exception):
    """Raised while preparing a test: (group, detail)."""

    def __init__(self, group, detail=""):
        super().__init__(group)
        self.group, self.detail = group, detail


def dtype_name(elem_type):
    return onnx.TensorProto.DataType.Name(elem_type)


def value_kind(type_proto):
    return type_proto.WhichOneof("value")  # tensor_type, sequence_type, ...


def subgraphs(node):
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            yield from a.graphs


def load_tensor(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    if t.data_type == onnx.TensorProto.UNDEFINED:
        raise Skip("test data is not a tensor (sequence/optional/map)",
                   os.path.basename(path))
    return numpy_helper.to_array(t)


def shape_of(vi):
    """Static dims of a value_info, None for unknown dims, or None if untyped."""
    tt = vi.type.tensor_type
    if not tt.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]


class Test:
    def __init__(self, suite, name):
        self.suite, self.name = suite, name
        self.dir = os.path.join(DATA_ROOT, suite, name)
        self.id = suite + "/" + name
        self.status = None  # "pass" | "fail" | "skip"
        self.group = ""     # skip group / failure stage
        self.detail = ""
        self.frozen = []    # graph inputs turned into initializers


def prepare(test, work, freeze):
    """Checks applicability; writes model, config and npz files. Raises Skip."""
    model = onnx.load(os.path.join(test.dir, "model.onnx"))
    graph = model.graph

    # Operator domains and kinds, including nested graphs.
    nodes, stack = [], [graph]
    while stack:
        g = stack.pop()
        for n in g.node:
            nodes.append(n)
            stack.extend(subgraphs(n))
    for n in nodes:
        if n.domain == "ai.onnx.preview.training":
            raise Skip("training op (ai.onnx.preview.training)", n.op_type)
        if n.domain not in ("", "ai.onnx"):
            raise Skip("op outside the default ONNX domain", n.domain + ":" + n.op_type)
    ops = {n.op_type for n in nodes}
    if ops & CONTROL_FLOW_OPS:
        raise Skip("control flow (If/Loop/Scan)", " ".join(sorted(ops & CONTROL_FLOW_OPS)))
    if ops & RANDOM_OPS:
        raise Skip("random op", " ".join(sorted(ops & RANDOM_OPS)))

    # Graph interface types.
    inits = {t.name for t in graph.initializer}
    g_inputs = [vi for vi in graph.input if vi.name not in inits]
    for vi in list(g_inputs) + list(graph.output):
        kind = value_kind(vi.type)
        if kind != "tensor_type":
            raise Skip("sequence/optional/map/sparse graph value",
                       "%s is %s" % (vi.name, kind))
        if vi.type.tensor_type.elem_type == onnx.TensorProto.STRING:
            raise Skip("string tensors", vi.name)

    outside = sorted(ops - SUPPORTED_OPS)
    if outside:
        raise Skip(OUTSIDE_SET, " ".join(outside))

    # Test data: test_data_set_0, inputs by position (as the ONNX backend
    # runner feeds them), outputs by position.
    ds = os.path.join(test.dir, "test_data_set_0")
    in_files = sorted(glob.glob(os.path.join(ds, "input_*.pb")),
                      key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[0]))
    out_files = sorted(glob.glob(os.path.join(ds, "output_*.pb")),
                       key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[0]))
    if len(in_files) > len(g_inputs):
        raise Skip("test data has more inputs than the graph declares",
                   "%d vs %d" % (len(in_files), len(g_inputs)))
    if len(in_files) < len(g_inputs):
        raise Skip("test data omits graph inputs", "%d vs %d" % (len(in_files), len(g_inputs)))
    if len(out_files) != len(graph.output):
        raise Skip("test data and graph outputs differ in number",
                   "%d vs %d" % (len(out_files), len(graph.output)))
    inputs = {vi.name: load_tensor(p) for vi, p in zip(g_inputs, in_files)}
    outputs = {vi.name: load_tensor(p) for vi, p in zip(graph.output, out_files)}

    # Graph inputs that only feed constant operand slots become initializers.
    consumers = collections.defaultdict(list)
    for n in nodes:
        for i, name in enumerate(n.input):
            if name:
                consumers[name].append((n, i))
    if freeze:
        for vi in g_inputs:
            uses = consumers.get(vi.name, [])
            if uses and all(i in CONST_OPERANDS.get(n.op_type, ()) for n, i in uses) \
                    and vi.name not in {o.name for o in graph.output}:
                test.frozen.append(vi.name)
        if test.frozen:
            for name in test.frozen:
                graph.initializer.append(numpy_helper.from_array(inputs.pop(name), name))
            if model.ir_version >= 4:  # before IR 4 initializers are also inputs
                keep = [vi for vi in graph.input if vi.name not in test.frozen]
                del graph.input[:]
                graph.input.extend(keep)
            g_inputs = [vi for vi in g_inputs if vi.name not in test.frozen]
    # Dropout in training mode (a true training_mode operand) is random.
    consts = {t.name: t for t in graph.initializer}
    for n in nodes:
        if n.op_type == "Dropout" and len(n.input) > 2 and n.input[2]:
            t = consts.get(n.input[2])
            if t is not None and bool(numpy_helper.to_array(t).reshape(-1)[0]):
                raise Skip("random op", "Dropout in training mode")

    for vi in g_inputs:
        et = vi.type.tensor_type.elem_type
        if et != onnx.TensorProto.FLOAT:
            raise Skip("non-float32 graph input", "%s is %s" % (vi.name, dtype_name(et)))
    for vi in graph.output:
        et = vi.type.tensor_type.elem_type
        if et != onnx.TensorProto.FLOAT:
            raise Skip("non-float32 graph output", "%s is %s" % (vi.name, dtype_name(et)))
    if not g_inputs:
        raise Skip("no runtime input (the whole graph is constant)")
    for name, a in list(inputs.items()) + list(outputs.items()):
        if a.dtype != np.float32:
            raise Skip("non-float32 graph input" if name in inputs else "non-float32 graph output",
                       "%s data is %s" % (name, a.dtype))
        if a.size == 0:
            raise Skip("zero-size tensor", name)
    for vi in g_inputs:
        declared = shape_of(vi)
        if declared is not None and None not in declared and \
                list(declared) != list(inputs[vi.name].shape):
            raise Skip("test data shape differs from the declared input shape",
                       "%s: %s vs %s" % (vi.name, declared, list(inputs[vi.name].shape)))

    # 3-D convolution / pooling: 5-D tensors (ranks from shape inference).
    conv_pool = [n for n in nodes if n.op_type in CONV_POOL_OPS]
    if conv_pool:
        probe = onnx.ModelProto()
        probe.CopyFrom(model)
        for vi in probe.graph.input:
            if vi.name in inputs:
                dims = vi.type.tensor_type.shape
                dims.ClearField("dim")
                for d in inputs[vi.name].shape:
                    dims.dim.add().dim_value = d
        try:
            inferred = shape_inference.infer_shapes(probe)
            ranks = {vi.name: len(vi.type.tensor_type.shape.dim)
                     for vi in list(inferred.graph.value_info) + list(inferred.graph.input)
                     + list(inferred.graph.output) if vi.type.tensor_type.HasField("shape")}
        except Exception:  # kiln reports a model ONNX cannot infer itself
            ranks = {}
        for t in graph.initializer:
            ranks[t.name] = len(t.dims)
        for n in conv_pool:
            kernel = [a for a in n.attribute if a.name == "kernel_shape"]
            rank = ranks.get(n.input[0])
            if (kernel and len(kernel[0].ints) >= 3) or (rank is not None and rank >= 5):
                raise Skip("3-D conv/pool (5-D tensors)", n.op_type)

    # Files: model, config, inputs, reference.
    d = os.path.join(work, test.suite, test.name)
    shutil.rmtree(d, ignore_errors=True)  # never read a previous run's output
    os.makedirs(d)
    model_path = os.path.join(d, "model.onnx")
    if test.frozen:
        onnx.save(model, model_path)
        onnx.checker.check_model(model_path)
    else:
        shutil.copyfile(os.path.join(test.dir, "model.onnx"), model_path)
    np.savez(os.path.join(d, "input.npz"), **inputs)
    np.savez(os.path.join(d, "reference.npz"), **outputs)
    q = json.dumps  # YAML flow scalars: JSON strings are valid YAML
    lines = ["# generated by tests/conformance/run_conformance.py for " + test.id,
             "model: " + q(model_path),
             "name: " + q(re.sub(r"[^A-Za-z0-9_]", "_", test.name)),
             "chip: bm1684x",
             "quantize: f32"]
    if ISA != "kiln":  # the chip's own commands (docs/DESIGN.md 4.1)
        lines.append("isa: " + ISA)
    lines.append("inputs:")
    for vi in g_inputs:
        lines.append("  %s: {shape: %s}" % (q(vi.name), list(inputs[vi.name].shape)))
    lines.append("output: " + q(os.path.join(d, "model.bmodel")))
    with open(os.path.join(d, "config.yaml"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return d, outputs


def first_error(text):
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for l in lines:
        if "error" in l.lower():
            return l
    return lines[0] if lines else "(no output)"


def describe_rc(rc):
    if rc < 0:
        return "killed by signal %d" % -rc
    if rc >= 128:
        return "crashed (exit %d)" % rc
    return "exit %d" % rc


def run_kiln(kiln, args):
    try:
        p = subprocess.run([kiln] + args, capture_output=True, text=True,
                           timeout=SUBPROCESS_TIMEOUT, errors="replace")
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % SUBPROCESS_TIMEOUT


def check_output(name, out, ref, row):
    """None if `out` is acceptable for reference `ref`, else why not."""
    if out is None:
        return "output '%s' missing from kiln's results" % name
    if out.shape != ref.shape:
        return "output '%s' has shape %s, expected %s" % (name, list(out.shape), list(ref.shape))
    o, r = out.astype(np.float64), ref.astype(np.float64)
    with np.errstate(invalid="ignore"):
        close = bool(np.allclose(o, r, rtol=RTOL, atol=ATOL, equal_nan=True))
    if close:
        return None
    finite = np.isfinite(r)
    ref_max = float(np.max(np.abs(r[finite]))) if finite.any() else 0.0
    with np.errstate(invalid="ignore"):
        diff = np.abs(o - r)
    max_abs = float(np.nanmax(diff)) if diff.size and not np.isnan(diff).all() else math.inf
    if row and row["pass"] and max_abs <= MAX_ABS_RTOL * ref_max + ATOL:
        return None
    if row:
        return "output '%s': cosine %.8f, euclidean %.6f, max_abs %.4g (max|ref| %.4g)" % (
            name, row["cosine"], row["euclidean"], max_abs, ref_max)
    return "output '%s': not compared by kiln compare, max_abs %.4g" % (name, max_abs)


def parse_compare(text):
    rows = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[4].rstrip(":") in ("PASS", "FAIL"):
            try:
                rows[parts[0]] = {"cosine": float(parts[1]), "euclidean": float(parts[2]),
                                  "max_abs": float(parts[3]),
                                  "pass": parts[4].rstrip(":") == "PASS"}
            except ValueError:
                pass
    return rows


def device_mib(compile_out, bmodel):
    """Device memory for `kiln run`: coefficients + activations + the file."""
    m = re.search(r"coefficients (\d+) bytes, activations (\d+) bytes", compile_out)
    need = os.path.getsize(bmodel) if os.path.exists(bmodel) else 0
    if m:
        need += int(m.group(1)) + int(m.group(2))
    return max(16, int(need * 1.5 / (1 << 20)) + 8)


def execute(test, kiln, work, freeze):
    try:
        d, ref = prepare(test, work, freeze)
    except Skip as s:
        test.status, test.group, test.detail = "skip", s.group, s.detail
        return test
    except Exception as e:  # a broken test file or a runner bug: never a pass
        test.status, test.group = "fail", "runner"
        test.detail = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
        return test
    bmodel = os.path.join(d, "model.bmodel")
    rc, out = run_kiln(kiln, ["compile", os.path.join(d, "config.yaml"), "-o", bmodel])
    with open(os.path.join(d, "compile.log"), "w") as f:
        f.write(out)
    if rc != 0:
        err = first_error(out)
        if rc is not None and 0 < rc < 128 and KILN_UNSUPPORTED.search(err):
            test.status = "skip"
            m = re.search(r"node '[^']*' \(([^)]*)\): unsupported operator", err)
            if m:  # in SUPPORTED_OPS, but this kiln binary does not take it (yet)
                test.group, test.detail = KILN_UNSUPPORTED_OP, m.group(1)
            else:
                test.group = "kiln: " + kiln_reason(err)
                test.detail = re.sub(r"^.*?error:\s*", "", err)
            return test
        test.status, test.group = "fail", "compile"
        test.detail = err if rc is not None and 0 < rc < 128 else "%s: %s" % (
            "timed out" if rc is None else describe_rc(rc), err)
        return test
    out_npz = os.path.join(d, "output.npz")
    mib = device_mib(out, bmodel)
    rc, log = run_kiln(kiln, ["run", bmodel, "--input", os.path.join(d, "input.npz"),
                              "--output", out_npz, "--device-mem", str(mib)])
    if rc is not None and rc != 0 and "out of device memory" in log:
        rc, log = run_kiln(kiln, ["run", bmodel, "--input", os.path.join(d, "input.npz"),
                                  "--output", out_npz])
    with open(os.path.join(d, "run.log"), "w") as f:
        f.write(log)
    if rc != 0:
        test.status, test.group = "fail", "run"
        test.detail = ("timed out" if rc is None else describe_rc(rc)) + ": " + first_error(log)
        return test
    rc, cmp_out = run_kiln(kiln, ["compare", out_npz, os.path.join(d, "reference.npz"),
                                  "--tolerance", "%g,%g" % (MIN_COS, MIN_EUCLID)])
    with open(os.path.join(d, "compare.log"), "w") as f:
        f.write(cmp_out)
    if rc is None or rc >= 128 or rc < 0:
        test.status, test.group = "fail", "compare"
        test.detail = "kiln compare " + ("timed out" if rc is None else describe_rc(rc))
        return test
    rows = parse_compare(cmp_out)
    if not rows:
        test.status, test.group = "fail", "compare"
        test.detail = "kiln compare compared nothing: " + first_error(cmp_out)
        return test
    try:
        with np.load(out_npz) as z:
            got = {k: z[k] for k in z.files}
    except Exception as e:
        test.status, test.group = "fail", "run"
        test.detail = "cannot read kiln's output %s: %s" % (out_npz, e)
        return test
    extra = sorted(set(got) - set(ref))
    problems = [check_output(name, got.get(name), r, rows.get(name)) for name, r in ref.items()]
    problems = [p for p in problems if p]
    if extra:
        problems.append("unexpected outputs: " + ", ".join(extra))
    if problems:
        test.status, test.group, test.detail = "fail", "mismatch", "; ".join(problems)
    else:
        test.status = "pass"
    return test


def kiln_reason(err):
    """Groups kiln's 'not supported' messages: node names and values removed."""
    msg = re.sub(r"^.*?error:\s*", "", err)
    msg = re.sub(r"node '[^']*' ", "", msg)
    msg = re.sub(r"= .*? is not supported", "= ... is not supported", msg)
    return msg


def failure_cause(test):
    """A failure's cause with names and numbers stripped, for grouping."""
    msg = re.sub(r"^.*?error:\s*", "", test.detail)
    msg = re.sub(r"node '[^']*'", "node", msg)
    msg = re.sub(r"'(?!top\.|tpu\.)[^']*'", "'X'", msg)  # names, not op kinds
    msg = re.sub(r"\[[^\]]*\]", "[..]", msg)
    msg = re.sub(r"(cosine|euclidean|max_abs|max\|ref\|) [-+0-9.e]+|inf|nan", r"\1 N", msg)
    msg = re.sub(r"\S*/(model\.\w+)", r"\1", msg)              # the work directory
    msg = re.sub(r"(?<!opset )(?<!to )\b\d+\b(?![-.]\w)", "N", msg)  # sizes, not 2-D or file:N
    return "%s: %s" % (test.group, msg[:140])


def importer_ops():
    """The op types the importer's source dispatches on (best effort)."""
    ops = set()
    for path in glob.glob(os.path.join(ROOT, "compiler", "lib", "Frontend", "Onnx", "*.cpp")):
        with open(path, errors="replace") as f:
            src = f.read()
        for args in re.findall(r'\.Cases?\(([^)]*)\)', src):
            ops.update(re.findall(r'"([A-Z][A-Za-z0-9]*)"', args))
        ops.update(re.findall(r'\{"([A-Z][A-Za-z0-9]*)",\s*&Importer::', src))
    return ops


def main():
    global DATA_ROOT
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[1:]))
    build = os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build"))
    ap.add_argument("--kiln", default=os.path.join(build, "tools", "kiln", "kiln"),
                    help="kiln binary (default: $KILN_BUILD_DIR/tools/kiln/kiln)")
    ap.add_argument("--filter", default="", help="regex on SUITE/TEST (re.search)")
    ap.add_argument("--jobs", "-j", type=int, default=2, help="parallel tests (default 2)")
    ap.add_argument("--work", default="", help="work directory (default: a temporary "
                    "one, removed at the end); keeps every test's files and logs")
    ap.add_argument("--data", default=DATA_ROOT, help="test data root (default %(default)s)")
    ap.add_argument("--list-skips", action="store_true", help="print every skipped test")
    ap.add_argument("--freeze", dest="freeze", action="store_true", default=True,
                    help="turn graph inputs feeding only constant operands into "
                    "initializers (default)")
    ap.add_argument("--no-freeze", dest="freeze", action="store_false",
                    help="skip such tests instead")
    ap.add_argument("--json", default="", help="write every test's result to this file")
    ap.add_argument("--isa", default="kiln", choices=["kiln", "bm1684x"],
                    help="the command set the bmodels carry (deploy config key isa)")
    args = ap.parse_args()
    global ISA
    ISA = args.isa

    DATA_ROOT = args.data
    if not os.path.isdir(DATA_ROOT):
        print("error: no ONNX test data at %s (apt-get install libonnx-testdata)" % DATA_ROOT,
              file=sys.stderr)
        return 2
    if not os.access(args.kiln, os.X_OK):
        print("error: kiln binary %s not found" % args.kiln, file=sys.stderr)
        return 2
    try:
        pattern = re.compile(args.filter)
    except re.error as e:
        print("error: --filter: %s" % e, file=sys.stderr)
        return 2

    tests = []
    for suite in SUITES:
        sdir = os.path.join(DATA_ROOT, suite)
        if not os.path.isdir(sdir):
            continue
        for name in sorted(os.listdir(sdir)):
            if os.path.isfile(os.path.join(sdir, name, "model.onnx")) and \
                    pattern.search(suite + "/" + name):
                tests.append(Test(suite, name))

    if not tests:  # an empty run must not look like a passing one
        print("error: no test under %s matches --filter '%s'" % (DATA_ROOT, args.filter),
              file=sys.stderr)
        return 2

    work = args.work or tempfile.mkdtemp(prefix="kiln-conformance-")
    os.makedirs(work, exist_ok=True)
    start = time.time()
    lock = threading.Lock()

    def done(t):
        if t.status == "fail":
            with lock:
                print("FAIL %s: %s: %s" % (t.id, t.group, t.detail), flush=True)

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(execute, t, args.kiln, work, args.freeze) for t in tests]
        for f in futures:
            f.add_done_callback(lambda f: done(f.result()))
        concurrent.futures.wait(futures)
    for f in futures:
        f.result()
    elapsed = time.time() - start

    passed = [t for t in tests if t.status == "pass"]
    failed = [t for t in tests if t.status == "fail"]
    skipped = [t for t in tests if t.status == "skip"]

    if args.list_skips and skipped:
        print("\nskipped tests:")
        for t in skipped:
            print("  SKIP %s: %s%s" % (t.id, t.group, ": " + t.detail if t.detail else ""))

    if skipped:
        print("\nskip reasons (%d tests):" % len(skipped))
        groups = collections.Counter(t.group for t in skipped)
        for group, n in sorted(groups.items(), key=lambda kv: (-kv[1], kv[0])):
            print("  %5d  %s" % (n, group))
            if group in (OUTSIDE_SET, KILN_UNSUPPORTED_OP, "op outside the default ONNX domain"):
                per_op = collections.Counter()
                for t in skipped:
                    if t.group == group:
                        per_op.update(t.detail.split())
                items = ["%s %d" % kv for kv in sorted(per_op.items(), key=lambda kv: (-kv[1], kv[0]))]
                line = "         "
                for item in items:
                    if len(line) + len(item) > 100:
                        print(line.rstrip(", "))
                        line = "         "
                    line += item + ", "
                print(line.rstrip(", "))
    if failed:
        print("\nfailures by cause (%d tests):" % len(failed))
        causes = collections.defaultdict(list)
        for t in failed:
            causes[failure_cause(t)].append(t.name)
        for cause, names in sorted(causes.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
            print("  %5d  %s  [%s]" % (len(names), cause, shown))

    # Random ops import (random_ops: const/input) but their outputs cannot be
    # compared with stored data, so their tests are skipped on purpose.
    missing = sorted(importer_ops() - SUPPORTED_OPS - RANDOM_OPS)
    if missing:
        print("\nwarning: the importer handles ops missing from the runner's SUPPORTED_OPS "
              "(their tests are skipped): " + " ".join(missing))
    frozen = sum(1 for t in tests if t.frozen and t.status in ("pass", "fail"))
    by_suite = collections.Counter((t.suite, t.status) for t in tests)
    print("\nper suite: " + "; ".join(
        "%s %d passed, %d failed, %d skipped" % (s, by_suite[(s, "pass")], by_suite[(s, "fail")],
                                                 by_suite[(s, "skip")])
        for s in SUITES if any(t.suite == s for t in tests)))
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    print("%d applicable tests had constant-operand inputs frozen into initializers" % frozen)
    print("%.0f s wall with %d jobs (kiln processes: %.0f s CPU); kiln %s; work dir %s" % (
        elapsed, args.jobs, ru.ru_utime + ru.ru_stime, args.kiln,
        work if args.work else "(removed)"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"test": t.id, "status": t.status, "group": t.group, "detail": t.detail,
                        "frozen": t.frozen} for t in tests], f, indent=1)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed, %d skipped" % (len(passed), len(failed), len(skipped)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
