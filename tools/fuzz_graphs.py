"""Random small ONNX graphs over kiln's op set, their PyTorch reference, and
the reductions the compiler fuzzer shrinks a failing graph with
(tools/fuzz_compiler.py).

A Graph is plain data (nodes with op, inputs, outputs, attributes; float32
initializers; graph inputs with shapes; an opset), so it can be evaluated,
reduced, saved as ONNX and as JSON (the regression tests keep shrunk graphs
as JSON). `generate(seed, index)` is deterministic. `evaluate` is the
reference: every op in float64 PyTorch, written from the ONNX spec
(independent of kiln's Top interpreter), with the graph's opset semantics
(Softmax before 13 flattens at its axis).
"""
import copy
import math

import numpy as np
import torch
import torch.nn.functional as F

torch.set_num_threads(1)


class Node:
    def __init__(self, op, inputs, outputs, attrs=None, name=""):
        self.op, self.inputs, self.outputs = op, list(inputs), list(outputs)
        self.attrs, self.name = dict(attrs or {}), name or outputs[0]


class Graph:
    def __init__(self, opset, seed):
        self.opset, self.seed = opset, seed
        self.inputs = []   # [(name, shape)]
        self.inits = {}    # name -> np.ndarray (float32 or int64)
        self.nodes = []
        self.outputs = []

    def inputs_values(self, k):
        out = {}
        for j, (name, shape) in enumerate(self.inputs):
            rng = np.random.default_rng([self.seed & 0xffffffff, k, j])
            out[name] = rng.standard_normal(shape).astype(np.float32)
        return out

    def copy(self):
        return copy.deepcopy(self)

    def validate(self):
        assert self.nodes and self.outputs and self.inputs
        names = {n for n, _ in self.inputs}
        assert not any(o in names for o in self.outputs)
        assert len(set(self.outputs)) == len(self.outputs)
        evaluate(self, self.inputs_values(0))

    # JSON: the regression tests keep shrunk graphs in this form.
    def to_json(self):
        return {"opset": self.opset, "seed": self.seed,
                "inputs": [[n, list(s)] for n, s in self.inputs],
                "inits": {k: _arr_json(v) for k, v in self.inits.items()},
                "nodes": [{"op": n.op, "name": n.name, "inputs": n.inputs,
                           "outputs": n.outputs,
                           "attrs": {k: _attr_json(v) for k, v in n.attrs.items()}}
                          for n in self.nodes],
                "outputs": self.outputs}

    @staticmethod
    def from_json(j):
        g = Graph(j["opset"], j["seed"])
        g.inputs = [(n, list(s)) for n, s in j["inputs"]]
        g.inits = {k: _arr_from(v) for k, v in j["inits"].items()}
        g.nodes = [Node(n["op"], n["inputs"], n["outputs"],
                        {k: _attr_from(v) for k, v in n["attrs"].items()}, n["name"])
                   for n in j["nodes"]]
        g.outputs = list(j["outputs"])
        return g


def _arr_json(a):
    return {"dtype": str(a.dtype), "shape": list(a.shape), "data": a.ravel().tolist()}


def _arr_from(j):
    return np.array(j["data"], dtype=j["dtype"]).reshape(j["shape"])


def _attr_json(v):
    return {"tensor": _arr_json(v)} if isinstance(v, np.ndarray) else v


def _attr_from(v):
    return _arr_from(v["tensor"]) if isinstance(v, dict) else v


# --------------------------------------------------------------------------
# ONNX
# --------------------------------------------------------------------------

def save_model(g, path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    env = evaluate(g, g.inputs_values(0))
    nodes = []
    for n in g.nodes:
        attrs = {k: (numpy_helper.from_array(v, n.outputs[0]) if isinstance(v, np.ndarray) else v)
                 for k, v in n.attrs.items()}
        nodes.append(helper.make_node(n.op, n.inputs, n.outputs, name=n.name, **attrs))
    graph = helper.make_graph(
        nodes, "fuzz",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in g.inputs],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, list(env[o].shape))
         for o in g.outputs],
        initializer=[numpy_helper.from_array(v, k) for k, v in g.inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", g.opset)],
                              producer_name="kiln-fuzz")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


# --------------------------------------------------------------------------
# Reference (float64 PyTorch, from the ONNX spec)
# --------------------------------------------------------------------------

WEIGHTED = {"Conv": 0, "ConvTranspose": 1, "Gemm": None, "MatMul": None}


def _round(t, dtype, absmax=None):
    """t stored in dtype: f16/bf16 rounding, or int8 fake quantization with
    the symmetric scale absmax / 127 (per tensor)."""
    if dtype == "f16":
        return t.to(torch.float16).to(torch.float64)
    if dtype == "bf16":
        return t.to(torch.bfloat16).to(torch.float64)
    if dtype == "int8" and absmax is not None:
        sc = max(absmax, 1e-12) / 127
        return torch.clamp(torch.round(t / sc), -128, 127) * sc
    return t


def _quant_weight(w, axis):
    """Per-channel symmetric INT8 fake quantization of a filter."""
    dims = [d for d in range(w.dim()) if d != axis]
    m = torch.amax(torch.abs(w), dim=dims, keepdim=True) if dims else torch.abs(w)
    sc = torch.clamp(m, min=1e-12) / 127
    return torch.round(w / sc) * sc


def _instance_norm_rounded(n, xs, dtype):
    """InstanceNormalization as kiln decomposes it (mean, centered, square,
    var, rstd, normalized, scaled), each step stored in dtype (int8: its own
    absmax): in a channel that is nearly constant, rstd magnifies the
    rounding of `centered`, which a single rounded result would hide."""
    x = xs[0]
    r = lambda t: _round(t, dtype, float(t.abs().max()) if t.numel() else 0.0)
    dims = tuple(range(2, x.dim()))
    sh = (1, -1) + (1,) * (x.dim() - 2)
    mean = r(x.mean(dim=dims, keepdim=True))
    c = r(x - mean)
    var = r(r(c * c).mean(dim=dims, keepdim=True))
    rstd = r(1 / torch.sqrt(var + n.attrs.get("epsilon", 1e-5)))
    return r(r(c * rstd) * xs[1].reshape(sh)) + xs[2].reshape(sh)


def evaluate(g, feeds, want_all=False, emulate=None, ranges=None):
    """The reference (float64); with `emulate` (f16, bf16, int8) every stored
    value rounded as that dtype stores it (int8: per-tensor scales from
    `ranges`, name -> absmax, and per-channel filters): what an ideal chip
    at that dtype computes, the yardstick for kiln's own narrow results."""
    rnd = (lambda name, t: _round(t, emulate, (ranges or {}).get(name))) if emulate \
        else (lambda name, t: t)
    env = {k: rnd(k, torch.from_numpy(np.asarray(v, np.float64))) for k, v in feeds.items()}
    for k, v in g.inits.items():
        env[k] = torch.from_numpy(v.astype(np.float64) if v.dtype == np.float32 else v)
    for n in g.nodes:
        ins = [env[i] if i else None for i in n.inputs]
        if emulate:
            ins = [x if (x is None or not x.is_floating_point() or i not in g.inits) else
                   (_quant_weight(x, WEIGHTED[n.op]) if emulate == "int8" and j == 1 and
                    n.op in WEIGHTED and WEIGHTED[n.op] is not None else
                    x if emulate == "int8" else _round(x, emulate))
                   for j, (i, x) in enumerate(zip(n.inputs, ins))]
        if emulate and n.op == "InstanceNormalization":
            outs = [_instance_norm_rounded(n, ins, emulate)]
        else:
            outs = eval_node(n, ins, g.opset)
        for name, v in zip(n.outputs, outs):
            env[name] = rnd(name, v) if n.op != "Constant" else v
    if want_all:
        return env
    return {o: env[o].numpy() for o in g.outputs}


def _ints(t):
    return [int(x) for x in t.reshape(-1).tolist()]


def _same_pads(spatial, k, s, d, upper):
    pads_b, pads_e = [], []
    for i in range(len(spatial)):
        out = -(-spatial[i] // s[i])
        total = max((out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - spatial[i], 0)
        small = total // 2
        b, e = (small, total - small) if upper else (total - small, small)
        pads_b.append(b)
        pads_e.append(e)
    return pads_b + pads_e


def _window(n, x, kshape):
    k = n.attrs.get("kernel_shape", kshape)
    r = len(k)
    s = n.attrs.get("strides", [1] * r)
    d = n.attrs.get("dilations", [1] * r)
    p = n.attrs.get("pads", [0] * 2 * r)
    ap = n.attrs.get("auto_pad", "NOTSET")
    if ap == "VALID":
        p = [0] * 2 * r
    elif ap in ("SAME_UPPER", "SAME_LOWER"):
        p = _same_pads(list(x.shape[2:]), k, s, d, ap == "SAME_UPPER")
    return list(k), list(s), list(d), list(p)


def _torch_pad(p):  # ONNX [b0, b1, e0, e1] -> F.pad (last dim first)
    r = len(p) // 2
    out = []
    for i in reversed(range(r)):
        out += [p[i], p[i + r]]
    return out


def _resize_coords(out_len, in_len, scale, mode):
    x = np.arange(out_len, dtype=np.float64)
    if mode == "asymmetric":
        return x / scale
    if mode == "align_corners":
        return x * (in_len - 1) / (out_len - 1) if out_len > 1 else np.zeros(out_len)
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if out_len > 1 else np.zeros(out_len)
    return (x + 0.5) / scale - 0.5  # half_pixel


def _resize(x, out_hw, scales_hw, mode, coord, nearest_mode):
    for axis, (o, sc) in zip((2, 3), zip(out_hw, scales_hw)):
        n = x.shape[axis]
        c = _resize_coords(o, n, sc, coord)
        if mode == "nearest":
            if nearest_mode == "floor":
                i = np.floor(c)
            elif nearest_mode == "ceil":
                i = np.ceil(c)
            elif nearest_mode == "round_prefer_ceil":
                i = np.floor(c + 0.5)
            else:
                i = np.ceil(c - 0.5)
            i = np.clip(i, 0, n - 1).astype(np.int64)
            x = torch.index_select(x, axis, torch.from_numpy(i))
        else:
            c = np.clip(c, 0, n - 1)
            lo = np.floor(c).astype(np.int64)
            hi = np.minimum(lo + 1, n - 1)
            w = torch.from_numpy(c - lo)
            shape = [1] * x.dim()
            shape[axis] = o
            w = w.reshape(shape)
            a = torch.index_select(x, axis, torch.from_numpy(lo))
            b = torch.index_select(x, axis, torch.from_numpy(hi))
            x = a * (1 - w) + b * w
    return x


def _slice_index(dim, start, end, step):
    if start < 0:
        start += dim
    if end < 0:
        end += dim
    if step > 0:
        start, end = min(max(start, 0), dim), min(max(end, 0), dim)
    else:
        start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
    return list(range(start, end, step))


def eval_node(n, xs, opset):
    op, a = n.op, n.attrs
    x = xs[0] if xs else None
    if op == "Constant":
        return [torch.from_numpy(a["value"].astype(np.float64))]
    if op in ("Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"):
        f = {"Add": torch.add, "Sub": torch.sub, "Mul": torch.mul, "Div": torch.div,
             "Max": torch.maximum, "Min": torch.minimum, "Pow": torch.pow}[op]
        return [f(xs[0], xs[1])]
    if op == "Sum":
        return [sum(xs[1:], xs[0])]
    if op == "PRelu":
        return [torch.where(x >= 0, x, x * xs[1])]
    unary = {
        "Relu": torch.relu, "Sigmoid": torch.sigmoid, "Tanh": torch.tanh,
        "Exp": torch.exp, "Log": torch.log, "Sqrt": torch.sqrt, "Abs": torch.abs,
        "Neg": torch.neg, "Reciprocal": torch.reciprocal, "Erf": torch.erf,
        "Softplus": lambda t: torch.log1p(torch.exp(t)),
        "Identity": lambda t: t,
        "HardSwish": lambda t: t * torch.clamp(t / 6 + 0.5, 0, 1),
    }
    if op in unary:
        return [unary[op](x)]
    if op == "LeakyRelu":
        return [torch.where(x >= 0, x, x * a.get("alpha", 0.01))]
    if op == "Elu":
        al = a.get("alpha", 1.0)
        return [torch.where(x > 0, x, al * (torch.exp(x) - 1))]
    if op == "Selu":
        al, ga = a.get("alpha", 1.67326319217681884765625), a.get("gamma", 1.05070102214813232421875)
        return [ga * torch.where(x > 0, x, al * (torch.exp(x) - 1))]
    if op == "HardSigmoid":
        return [torch.clamp(a.get("alpha", 0.2) * x + a.get("beta", 0.5), 0, 1)]
    if op == "Clip":
        if opset < 11:
            lo, hi = a.get("min", -3.4028234663852886e38), a.get("max", 3.4028234663852886e38)
        else:
            lo = float(xs[1]) if len(xs) > 1 and xs[1] is not None else -math.inf
            hi = float(xs[2]) if len(xs) > 2 and xs[2] is not None else math.inf
        return [torch.clamp(x, lo, hi)]
    if op in ("Softmax", "LogSoftmax"):
        axis = a.get("axis", -1 if opset >= 13 else 1)
        axis %= x.dim()
        f = torch.softmax if op == "Softmax" else torch.log_softmax
        if opset >= 13:
            return [f(x, axis)]
        shp = x.shape
        rows = int(np.prod(shp[:axis])) if axis else 1
        return [f(x.reshape(rows, -1), 1).reshape(shp)]
    if op.startswith("Reduce"):
        if "axes" in a:
            axes = a["axes"]
        elif len(xs) > 1 and xs[1] is not None:
            axes = _ints(xs[1])
        else:
            axes = list(range(x.dim()))
        axes = sorted(ax % x.dim() for ax in axes)
        keep = bool(a.get("keepdims", 1))
        if op == "ReduceSum":
            y = torch.sum(x, axes, keepdim=keep)
        elif op == "ReduceMean":
            y = torch.mean(x, axes, keepdim=keep)
        elif op == "ReduceMax":
            y = torch.amax(x, axes, keepdim=keep)
        elif op == "ReduceMin":
            y = torch.amin(x, axes, keepdim=keep)
        elif op == "ReduceL2":
            y = torch.sqrt(torch.sum(x * x, axes, keepdim=keep))
        else:
            y = torch.sum(x * x, axes, keepdim=keep)
        return [y]
    if op == "Conv":
        w, b = xs[1], xs[2] if len(xs) > 2 else None
        k, s, d, p = _window(n, x, list(w.shape[2:]))
        y = F.conv2d(F.pad(x, _torch_pad(p)), w, b, s, 0, d, a.get("group", 1))
        return [y]
    if op == "ConvTranspose":
        w, b = xs[1], xs[2] if len(xs) > 2 else None
        k = list(w.shape[2:])
        s = a.get("strides", [1, 1])
        d = a.get("dilations", [1, 1])
        p = a.get("pads", [0, 0, 0, 0])
        op_ = a.get("output_padding", [0, 0])
        full = F.conv_transpose2d(x, w, None, s, 0, 0, a.get("group", 1), d)
        # output_padding adds rows at the end that only get the bias
        full = F.pad(full, [0, op_[1], 0, op_[0]])
        H, W = full.shape[2], full.shape[3]
        y = full[:, :, p[0]:H - p[2], p[1]:W - p[3]]
        if b is not None:
            y = y + b.reshape(1, -1, 1, 1)
        return [y]
    if op in ("MaxPool", "AveragePool"):
        k, s, d, p = _window(n, x, None)
        ceil = bool(a.get("ceil_mode", 0))
        if ceil:
            # ONNX 1.12's shape inference keeps a last window that starts in
            # the end padding, PyTorch (and newer ONNX) drop it: not generated.
            for i in range(2):
                o = -(-(x.shape[2 + i] + p[i] + p[i + 2] - k[i]) // s[i]) + 1
                assert (o - 1) * s[i] < x.shape[2 + i] + p[i]
        if op == "MaxPool":
            if ceil or p[0] != p[2] or p[1] != p[3] or p[0] > k[0] // 2 or p[1] > k[1] // 2:
                assert not ceil or (p[0] == p[2] and p[1] == p[3])
                if not ceil:
                    return [F.max_pool2d(F.pad(x, _torch_pad(p), value=-math.inf), k, s)]
            return [F.max_pool2d(x, k, s, [p[0], p[1]], ceil_mode=ceil)]
        cip = bool(a.get("count_include_pad", 0))
        if ceil:
            assert p[0] == p[2] and p[1] == p[3] and p[0] <= k[0] // 2 and p[1] <= k[1] // 2
            return [F.avg_pool2d(x, k, s, [p[0], p[1]], ceil_mode=True, count_include_pad=cip)]
        tp = _torch_pad(p)
        num = F.avg_pool2d(F.pad(x, tp), k, s, divisor_override=1)
        if cip:
            return [num / (k[0] * k[1])]
        den = F.avg_pool2d(F.pad(torch.ones_like(x), tp), k, s, divisor_override=1)
        return [num / den]
    if op == "GlobalAveragePool":
        return [x.mean(dim=(2, 3), keepdim=True)]
    if op == "GlobalMaxPool":
        return [x.amax(dim=(2, 3), keepdim=True)]
    if op == "BatchNormalization":
        sc, b, m, v = [t.reshape(1, -1, *([1] * (x.dim() - 2))) for t in xs[1:5]]
        return [(x - m) / torch.sqrt(v + a.get("epsilon", 1e-5)) * sc + b]
    if op == "InstanceNormalization":
        dims = tuple(range(2, x.dim()))
        m = x.mean(dim=dims, keepdim=True)
        v = ((x - m) ** 2).mean(dim=dims, keepdim=True)
        sh = (1, -1) + (1,) * (x.dim() - 2)
        return [(x - m) / torch.sqrt(v + a.get("epsilon", 1e-5)) * xs[1].reshape(sh) + xs[2].reshape(sh)]
    if op == "Gemm":
        A, B = xs[0], xs[1]
        if a.get("transA", 0):
            A = A.t()
        if a.get("transB", 0):
            B = B.t()
        y = a.get("alpha", 1.0) * (A @ B)
        if len(xs) > 2 and xs[2] is not None:
            y = y + a.get("beta", 1.0) * xs[2]
        return [y]
    if op == "MatMul":
        return [torch.matmul(xs[0], xs[1])]
    if op == "Transpose":
        perm = a.get("perm", list(reversed(range(x.dim()))))
        return [x.permute(*perm)]
    if op == "Reshape":
        shape = _ints(xs[1])
        shape = [x.shape[i] if v == 0 else v for i, v in enumerate(shape)]
        return [x.reshape(shape)]
    if op == "Flatten":
        ax = a.get("axis", 1) % (x.dim() + 1) if a.get("axis", 1) < 0 else a.get("axis", 1)
        lead = int(np.prod(x.shape[:ax])) if ax else 1
        return [x.reshape(lead, -1)]
    if op == "Squeeze":
        axes = a["axes"] if "axes" in a else _ints(xs[1])
        axes = sorted((ax % x.dim() for ax in axes), reverse=True)
        for ax in axes:
            assert x.shape[ax] == 1
            x = x.squeeze(ax)
        return [x]
    if op == "Unsqueeze":
        axes = a["axes"] if "axes" in a else _ints(xs[1])
        r = x.dim() + len(axes)
        for ax in sorted(ax % r for ax in axes):
            x = x.unsqueeze(ax)
        return [x]
    if op == "Concat":
        return [torch.cat(xs, a["axis"])]
    if op == "Split":
        axis = a.get("axis", 0)
        if "split" in a:
            sizes = a["split"]
        elif len(xs) > 1 and xs[1] is not None:
            sizes = _ints(xs[1])
        else:
            k = len(n.outputs)
            assert x.shape[axis] % k == 0
            sizes = [x.shape[axis] // k] * k
        assert sum(sizes) == x.shape[axis]
        return list(torch.split(x, sizes, axis))
    if op == "Slice":
        starts, ends = _ints(xs[1]), _ints(xs[2])
        axes = _ints(xs[3]) if len(xs) > 3 and xs[3] is not None else list(range(len(starts)))
        steps = _ints(xs[4]) if len(xs) > 4 and xs[4] is not None else [1] * len(starts)
        for st, en, ax, sp in zip(starts, ends, axes, steps):
            idx = _slice_index(x.shape[ax], st, en, sp)
            assert idx
            x = torch.index_select(x, ax, torch.tensor(idx, dtype=torch.int64))
        return [x]
    if op == "Gather":
        idx = xs[1]
        ax = a.get("axis", 0) % x.dim()
        flat = torch.index_select(x, ax, (idx.reshape(-1) % x.shape[ax]).long())
        shape = list(x.shape[:ax]) + list(idx.shape) + list(x.shape[ax + 1:])
        return [flat.reshape(shape)]
    if op == "Pad":
        if opset < 11:
            p, cv = a["pads"], a.get("value", 0.0)
        else:
            p = _ints(xs[1])
            cv = float(xs[2]) if len(xs) > 2 and xs[2] is not None else 0.0
        mode = a.get("mode", "constant")
        tp = _torch_pad(p)
        while len(tp) >= 2 and tp[-1] == 0 and tp[-2] == 0:
            tp = tp[:-2]
        if mode == "constant":
            return [F.pad(x, tp, value=cv)]
        return [F.pad(x, tp, mode="reflect" if mode == "reflect" else "replicate")]
    if op == "Resize":
        scales = xs[2] if len(xs) > 2 and xs[2] is not None and xs[2].numel() else None
        if scales is not None:
            sc = [float(v) for v in scales.tolist()]
            out = [int(math.floor(x.shape[i] * sc[i])) for i in range(4)]
        else:
            out = _ints(xs[3])
            sc = [out[i] / x.shape[i] for i in range(4)]
        assert out[0] == x.shape[0] and out[1] == x.shape[1]
        return [_resize(x, out[2:], sc[2:], a.get("mode", "nearest"),
                        a.get("coordinate_transformation_mode", "half_pixel"),
                        a.get("nearest_mode", "round_prefer_floor"))]
    if op == "Expand":
        shape = _ints(xs[1])
        return [x * torch.ones(shape, dtype=x.dtype)]
    if op == "Tile":
        return [x.repeat(*_ints(xs[1]))]
    raise NotImplementedError(op)


# --------------------------------------------------------------------------
# Generator
# --------------------------------------------------------------------------

class Reject(Exception):
    pass


class Builder:
    def __init__(self, g, rng):
        self.g, self.rng = g, rng
        self.env = {}
        self.count = 0
        self.live = []  # float activations: names

    def fresh(self, prefix="t"):
        self.count += 1
        return "%s%d" % (prefix, self.count)

    def shape(self, v):
        return list(self.env[v].shape)

    def r(self, lo, hi):  # inclusive
        return int(self.rng.integers(lo, hi + 1))

    def p(self, prob):
        return self.rng.random() < prob

    def pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def weight(self, shape, scale=1.0):
        return (self.rng.standard_normal(shape) * scale).astype(np.float32)

    def const(self, arr, node_prob=0.3):
        """An operand: an initializer, or (sometimes) a Constant node."""
        arr = np.asarray(arr)
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        if self.p(node_prob):
            name = self.fresh("k")
            self.node("Constant", [], {"value": arr}, out=name)
            return name
        name = self.fresh("w")
        self.g.inits[name] = arr
        self.env[name] = torch.from_numpy(arr.astype(np.float64) if arr.dtype == np.float32 else arr)
        return name

    def ints(self, vals):
        name = self.fresh("i")
        arr = np.array(vals, np.int64)
        self.g.inits[name] = arr
        self.env[name] = torch.from_numpy(arr)
        return name

    def node(self, op, ins, attrs=None, nout=1, out=None):
        outs = [out] if out else [self.fresh() for _ in range(nout)]
        n = Node(op, ins, outs, attrs, name="n%d_%s" % (len(self.g.nodes), op))
        try:
            vals = eval_node(n, [self.env[i] if i else None for i in ins], self.g.opset)
        except (AssertionError, RuntimeError, IndexError, ValueError, ZeroDivisionError) as e:
            raise Reject(str(e))
        for o, v in zip(outs, vals):
            if v.numel() == 0 or v.numel() > 50000 or not torch.isfinite(v).all():
                raise Reject("empty, too large or not finite")
            self.env[o] = v
        self.g.nodes.append(n)
        return outs if nout > 1 else outs[0]


# -- blocks: each takes a 4-D (or other) value and returns a new value --------

def _rank(b, v):
    return len(b.shape(v))


def blk_conv(b, v, oc=None, k=None, act=False):
    N, C, H, W = b.shape(v)
    oc = oc or b.r(1, 8)
    group = 1
    if b.p(0.2) and oc % C == 0:
        group = C
    elif b.p(0.1):
        divs = [g for g in range(2, C + 1) if C % g == 0 and oc % g == 0]
        group = b.pick(divs) if divs else 1
    kh = k or b.pick([1, 1, 3, 3, 3, 2, 5])
    kw = k or (kh if b.p(0.8) else b.pick([1, 3]))
    attrs = {"kernel_shape": [kh, kw]}
    if b.p(0.3):
        attrs["strides"] = [b.r(1, 2), b.r(1, 2)]
    if b.p(0.1):
        attrs["dilations"] = [b.r(1, 2), b.r(1, 2)]
    if b.p(0.15):
        attrs["auto_pad"] = b.pick(["SAME_UPPER", "SAME_LOWER", "VALID"])
        if attrs["auto_pad"] != "VALID":
            attrs.pop("dilations", None)
    elif b.p(0.8):
        if b.p(0.7):
            attrs["pads"] = [kh // 2, kw // 2, kh // 2, kw // 2]
        else:
            attrs["pads"] = [b.r(0, kh - 1), b.r(0, kw - 1), b.r(0, kh - 1), b.r(0, kw - 1)]
    if group > 1:
        attrs["group"] = group
    w = b.const(b.weight([oc, C // group, kh, kw], 1.0 / math.sqrt(C // group * kh * kw)), 0.05)
    ins = [v, w]
    if b.p(0.7):
        ins.append(b.const(b.weight([oc], 0.3), 0.05))
    y = b.node("Conv", ins, attrs)
    if act:
        y = blk_act(b, y)
    return y


def blk_deconv(b, v):
    N, C, H, W = b.shape(v)
    oc = b.r(1, 8)
    k = b.pick([1, 2, 3, 4])
    s = b.pick([1, 2, 2, 3]) if k > 1 else b.r(1, 2)
    attrs = {"kernel_shape": [k, k], "strides": [s, s]}
    if k > 1 and b.p(0.6):
        pd = b.r(0, min(k - 1, 1))
        attrs["pads"] = [pd, pd, pd, pd] if b.p(0.7) else [pd, b.r(0, k - 1), b.r(0, k - 1), pd]
    if s > 1 and b.p(0.3):
        attrs["output_padding"] = [b.r(0, s - 1), b.r(0, s - 1)]
    group = C if (b.p(0.15) and oc == C) else 1
    if group > 1:
        attrs["group"] = group
    w = b.const(b.weight([C, oc // group, k, k], 1.0 / math.sqrt(C * k * k / (s * s))), 0.05)
    ins = [v, w] + ([b.const(b.weight([oc], 0.3), 0.05)] if b.p(0.6) else [])
    return b.node("ConvTranspose", ins, attrs)


def blk_pool(b, v):
    op = b.pick(["MaxPool", "AveragePool"])
    k = b.pick([2, 2, 3, 1])
    kw = k if b.p(0.8) else b.pick([1, 2, 3])
    attrs = {"kernel_shape": [k, kw], "strides": [b.r(1, 2), b.r(1, 2)]}
    ceil = b.p(0.2)
    if b.p(0.4):
        ph, pw = b.r(0, k // 2), b.r(0, kw // 2)
        attrs["pads"] = [ph, pw, ph, pw]
        if not ceil and b.p(0.3):
            attrs["pads"] = [b.r(0, k // 2), b.r(0, kw // 2), b.r(0, k // 2), b.r(0, kw // 2)]
    if ceil:
        attrs["ceil_mode"] = 1
    if op == "AveragePool" and b.p(0.4):
        attrs["count_include_pad"] = 1
    return b.node(op, [v], attrs)


def blk_global_pool(b, v):
    return b.node(b.pick(["GlobalAveragePool", "GlobalMaxPool"]), [v])


def blk_act(b, v):
    op = b.pick(["Relu", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish",
                 "Clip", "Elu", "Softplus", "Abs", "Neg", "PRelu", "Erf", "Selu", "Exp",
                 "HardSwishForm", "HardSigmoidForm", "Relu6"])
    if op == "LeakyRelu":
        return b.node(op, [v], {"alpha": float(b.pick([0.01, 0.1, 0.2]))})
    if op == "HardSigmoid":
        return b.node(op, [v], {"alpha": float(b.pick([0.2, 1 / 6])), "beta": 0.5})
    if op == "HardSwish":
        if b.g.opset < 14:
            return blk_hardswish_form(b, v)
        return b.node(op, [v])
    if op in ("Clip", "Relu6"):
        lo, hi = (0.0, 6.0) if op == "Relu6" else (float(b.pick([-1, 0, -0.5])), float(b.pick([0.5, 1, 2])))
        return clip(b, v, lo, hi)
    if op == "Elu":
        return b.node(op, [v], {"alpha": float(b.pick([1.0, 0.5]))})
    if op == "PRelu":
        sh = b.shape(v)
        slope = b.weight([sh[1]] + [1] * (len(sh) - 2) if len(sh) > 1 else [1], 0.25)
        return b.node(op, [v, b.const(slope, 0.1)])
    if op == "Exp":
        return b.node("Exp", [b.node("Tanh", [v])])
    if op == "HardSwishForm":
        return blk_hardswish_form(b, v)
    if op == "HardSigmoidForm":
        return blk_hardsigmoid_form(b, v)
    return b.node(op, [v])


def clip(b, v, lo, hi):
    if b.g.opset < 11:
        return b.node("Clip", [v], {"min": lo, "max": hi})
    ins = [v, b.const(np.array(lo, np.float32), 0.5)]
    if b.p(0.9):
        ins.append(b.const(np.array(hi, np.float32), 0.5))
    elif b.p(0.5):
        ins = [v, "", b.const(np.array(hi, np.float32), 0.5)]
    return b.node("Clip", ins)


def blk_hardswish_form(b, v):
    """Paddle2ONNX: Div(Mul(x, Clip(Add(x, 3), 0, 6)), 6)."""
    a = b.node("Add", [v, b.const(np.array(3, np.float32), 0.5)])
    c = clip(b, a, 0.0, 6.0)
    m = b.node("Mul", [v, c] if b.p(0.5) else [c, v])
    if b.p(0.7):
        return b.node("Div", [m, b.const(np.array(6, np.float32), 0.6)])
    return b.node("Mul", [m, b.const(np.array(1 / 6, np.float32), 0.6)])


def blk_hardsigmoid_form(b, v):
    """Paddle2ONNX: Clip(Add(Mul(x, 1/6), 0.5), 0, 1)."""
    m = b.node("Mul", [v, b.const(np.array(b.pick([1 / 6, 0.2]), np.float32), 0.5)])
    a = b.node("Add", [m, b.const(np.array(0.5, np.float32), 0.5)])
    return clip(b, a, 0.0, 1.0)


def blk_se(b, v):
    """Squeeze-and-excitation: x * gate(conv1x1(relu(conv1x1(GAP(x)))))."""
    N, C, H, W = b.shape(v)
    p = b.node("GlobalAveragePool", [v]) if b.p(0.8) else \
        b.node("ReduceMean", [v], {"axes": [2, 3], "keepdims": 1}) if b.g.opset < 18 else None
    mid = max(1, C // b.pick([1, 2, 4]))
    h = blk_conv(b, p, oc=mid, k=1)
    h = b.node("Relu", [h])
    h = blk_conv(b, h, oc=C, k=1)
    gate = b.pick(["Sigmoid", "HardSigmoid", "form"])
    if gate == "form":
        h = blk_hardsigmoid_form(b, h)
    elif gate == "HardSigmoid":
        h = b.node("HardSigmoid", [h], {"alpha": float(1 / 6), "beta": 0.5})
    else:
        h = b.node("Sigmoid", [h])
    return b.node("Mul", [v, h] if b.p(0.7) else [h, v])


def broadcast_shape(b, sh):
    r = len(sh)
    opts = [[1], [], [sh[-1]], list(sh), [1] * r]
    if r >= 3:
        opts += [[sh[-3], 1, 1], [1] * (r - 3) + [sh[-3], 1, 1], list(sh[-2:]), [sh[-2], 1]]
    return b.pick(opts)


def blk_binary(b, v):
    sh = b.shape(v)
    op = b.pick(["Add", "Add", "Sub", "Mul", "Mul", "Div", "Max", "Min", "Pow"])
    other = [o for o in b.live if o != v and _broadcastable(b.shape(o), sh)]
    if op not in ("Div", "Pow") and other and b.p(0.4):
        o = b.pick(other)
        return b.node(op, [v, o] if b.p(0.5) else [o, v])
    bs = broadcast_shape(b, sh)
    if op == "Div":
        c = (np.abs(b.rng.standard_normal(bs)) + 0.5) * b.pick([1, -1])
        return b.node(op, [v, b.const(c)])
    if op == "Pow":
        return b.node(op, [v, b.const(np.array(2.0, np.float32))])
    c = b.rng.standard_normal(bs)
    return b.node(op, [v, b.const(c)] if b.p(0.7) else [b.const(c), v])


def _broadcastable(a, s):
    """a broadcasts to s (result shape s)."""
    if len(a) > len(s):
        return False
    return all(x == y or x == 1 for x, y in zip(reversed(a), reversed(s)))


def blk_residual(b, v):
    N, C, H, W = b.shape(v)
    y = blk_conv(b, v, oc=C, k=b.pick([1, 3]))
    if b.shape(y) != [N, C, H, W]:
        raise Reject("shape")
    if b.p(0.5):
        y = blk_act(b, y)
    return b.node(b.pick(["Add", "Add", "Sum"]), [v, y])


def blk_concat(b, v):
    sh = b.shape(v)
    r = len(sh)
    axis = 1 if (r > 1 and b.p(0.7)) else b.r(0, r - 1)
    parts = [v]
    for _ in range(b.r(1, 2)):
        if r == 4 and axis == 1 and b.p(0.5):
            parts.append(blk_conv(b, v, k=1))
            if b.shape(parts[-1])[2:] != sh[2:]:
                raise Reject("shape")
        else:
            cands = [o for o in b.live if len(b.shape(o)) == r and all(
                b.shape(o)[i] == sh[i] for i in range(r) if i != axis)]
            parts.append(b.pick(cands) if cands and b.p(0.5) else blk_act(b, v))
    if b.p(0.3):
        parts.reverse()
    ax = axis if b.p(0.8) else axis - r
    return b.node("Concat", parts, {"axis": ax})


def blk_split(b, v):
    sh = b.shape(v)
    r = len(sh)
    axes = [i for i in range(r) if sh[i] >= 2]
    if not axes:
        raise Reject("no axis")
    axis = 1 if 1 in axes and b.p(0.6) else b.pick(axes)
    n = b.r(2, min(3, sh[axis]))
    cuts = sorted(b.rng.choice(np.arange(1, sh[axis]), n - 1, replace=False).tolist())
    sizes = [e - s for s, e in zip([0] + cuts, cuts + [sh[axis]])]
    attrs = {"axis": axis}
    ins = [v]
    if b.g.opset >= 13:
        ins.append(b.ints(sizes))
    else:
        attrs["split"] = sizes
    outs = b.node("Split", ins, attrs, nout=n)
    # continue from one part; the others join later or become outputs
    for o in outs[1:]:
        b.live.append(o)
    return outs[0]


def blk_slice(b, v):
    sh = b.shape(v)
    r = len(sh)
    nax = b.r(1, min(2, r))
    axes = sorted(b.rng.choice(np.arange(r), nax, replace=False).tolist())
    starts, ends, steps = [], [], []
    for ax in axes:
        d = sh[ax]
        step = b.pick([1, 1, 1, 2, -1])
        if step > 0:
            s = b.r(0, d - 1)
            e = b.r(s + 1, d) if b.p(0.8) else 2 ** 31
            if b.p(0.2):
                s -= d
        else:
            s = b.r(0, d - 1)
            e = b.r(-1, s - 1) if b.p(0.6) else -(2 ** 31)
            if e == -1:
                e = -(2 ** 31)
        starts.append(s)
        ends.append(e)
        steps.append(step)
    ins = [v, b.ints(starts), b.ints(ends), b.ints([a if b.p(0.8) else a - r for a in axes])]
    if any(s != 1 for s in steps) or b.p(0.5):
        ins.append(b.ints(steps))
    return b.node("Slice", ins)


def blk_transpose(b, v):
    r = _rank(b, v)
    perm = b.rng.permutation(r).tolist()
    return b.node("Transpose", [v], {"perm": perm})


def blk_reshape(b, v):
    sh = b.shape(v)
    total = int(np.prod(sh))
    r = len(sh)
    opts = []
    if r == 4:
        N, C, H, W = sh
        opts += [[N, C, H * W], [N, C * H * W], [N, C * H, W], [N * C, H, W], [0, 0, -1], [0, -1]]
    if r in (2, 3):
        for c in range(1, 9):
            rest = total // sh[0]
            if rest % c == 0:
                hw = rest // c
                h = int(math.sqrt(hw))
                while h > 1 and hw % h:
                    h -= 1
                opts.append([sh[0], c, h, hw // h])
    opts.append([total])
    opts.append([-1, sh[-1]])
    target = b.pick(opts)
    if b.p(0.3) and -1 not in target and 0 not in target and len(target) > 1:
        target = list(target)
        target[b.r(0, len(target) - 1)] = -1
    return b.node("Reshape", [v, b.ints(target)])


def blk_flatten_gemm(b, v):
    sh = b.shape(v)
    if len(sh) != 2:
        v = b.node("Flatten", [v], {"axis": 1}) if len(sh) > 1 else v
        sh = b.shape(v)
    K = sh[1]
    if K > 512:
        raise Reject("K")
    M = b.r(1, 16)
    attrs = {}
    transB = b.p(0.5)
    if transB:
        attrs["transB"] = 1
    if b.p(0.2):
        attrs["alpha"] = float(b.pick([0.5, 2.0]))
    B = b.const(b.weight([M, K] if transB else [K, M], 1 / math.sqrt(K)), 0.05)
    ins = [v, B]
    if b.p(0.7) or b.g.opset < 11:
        ins.append(b.const(b.weight([M] if b.p(0.8) else [1, M], 0.3), 0.05))
        if b.p(0.2):
            attrs["beta"] = float(b.pick([0.5, 2.0]))
    return b.node("Gemm", ins, attrs)


def blk_matmul(b, v):
    sh = b.shape(v)
    if len(sh) < 2:
        raise Reject("rank")
    K = sh[-1]
    if b.p(0.5) or len(sh) < 3:
        M = b.r(1, 12)
        return b.node("MatMul", [v, b.const(b.weight([K, M], 1 / math.sqrt(K)), 0.05)])
    perm = list(range(len(sh)))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    t = b.node("Transpose", [v], {"perm": perm})
    y = b.node("MatMul", [v, t])
    return b.node("Mul", [y, b.const(np.array(1 / math.sqrt(K), np.float32))])


def blk_softmax(b, v):
    r = _rank(b, v)
    op = "Softmax" if b.p(0.85) else "LogSoftmax"
    if b.p(0.3):
        return b.node(op, [v])
    return b.node(op, [v], {"axis": b.r(-r, r - 1)})


def blk_reduce(b, v):
    sh = b.shape(v)
    r = len(sh)
    op = b.pick(["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceL2", "ReduceSumSquare"])
    nax = b.r(1, min(2, r))
    axes = sorted(b.rng.choice(np.arange(r), nax, replace=False).tolist())
    if b.p(0.2):
        axes = [a - r for a in axes]
    keep = int(b.p(0.7))
    if op == "ReduceSum" and b.g.opset >= 13:
        return b.node(op, [v, b.ints(axes)], {"keepdims": keep})
    return b.node(op, [v], {"axes": axes, "keepdims": keep})


def blk_resize(b, v):
    N, C, H, W = b.shape(v)
    if b.g.opset < 11:
        raise Reject("Resize before opset 11 has other semantics")
    kind = b.pick(["nearest_asym", "nearest_half", "linear_half", "linear_align", "linear_pt",
                   "sizes"])
    attrs = {}
    if kind.startswith("nearest"):
        attrs["mode"] = "nearest"
        if kind == "nearest_asym":
            attrs["coordinate_transformation_mode"] = "asymmetric"
            attrs["nearest_mode"] = "floor"
    else:
        attrs["mode"] = "linear"
        attrs["coordinate_transformation_mode"] = {
            "linear_half": "half_pixel", "linear_align": "align_corners",
            "linear_pt": "pytorch_half_pixel", "sizes": "half_pixel"}[kind]
    empty = b.const(np.zeros([0], np.float32), 0.0)
    if kind == "sizes":
        attrs["mode"] = b.pick(["nearest", "linear"])
        sizes = [N, C, b.r(1, 2 * H), b.r(1, 2 * W)]
        if b.g.opset < 13:
            return b.node("Resize", [v, empty, empty, b.ints(sizes)], attrs)
        return b.node("Resize", [v, empty, "", b.ints(sizes)] if b.p(0.5) else
                      [v, "", "", b.ints(sizes)], attrs)
    sh, sw = float(b.pick([1, 2, 2, 3])), float(b.pick([1, 2, 2, 3]))
    if b.p(0.15) and H % 2 == 0 and W % 2 == 0:
        sh = sw = 0.5
    return b.node("Resize", [v, empty, b.const(np.array([1, 1, sh, sw], np.float32), 0.0)], attrs)


def blk_batchnorm(b, v):
    C = b.shape(v)[1]
    ins = [v, b.const(b.weight([C], 0.5) + 1, 0.0), b.const(b.weight([C], 0.3), 0.0),
           b.const(b.weight([C], 0.3), 0.0),
           b.const((np.abs(b.weight([C])) + 0.5).astype(np.float32), 0.0)]
    return b.node("BatchNormalization", ins, {"epsilon": 1e-5})


def blk_pad(b, v):
    sh = b.shape(v)
    r = len(sh)
    pads = [0] * (2 * r)
    for ax in range(max(0, r - 2), r):
        pads[ax], pads[ax + r] = b.r(0, 2), b.r(0, 2)
    mode = b.pick(["constant", "constant", "reflect", "edge"])
    if mode == "reflect" and any(pads[ax] >= sh[ax] or pads[ax + r] >= sh[ax] for ax in range(r)):
        mode = "constant"
    attrs = {"mode": mode}
    if b.g.opset < 11:
        attrs["pads"] = pads
        return b.node("Pad", [v], attrs)
    ins = [v, b.ints(pads)]
    if mode == "constant" and b.p(0.5):
        ins.append(b.const(np.array(b.pick([0.0, 1.0, -0.5]), np.float32), 0.0))
    return b.node("Pad", ins, attrs)


def blk_squeeze_gemm(b, v):
    """GAP -> Squeeze -> Gemm -> Unsqueeze: a classifier head."""
    p = b.node("GlobalAveragePool", [v])
    if b.g.opset >= 13:
        s = b.node("Squeeze", [p, b.ints([2, 3])])
    else:
        s = b.node("Squeeze", [p], {"axes": [2, 3]})
    y = blk_flatten_gemm(b, s)
    if b.p(0.5):
        return y
    if b.g.opset >= 13:
        return b.node("Unsqueeze", [y, b.ints([2, 3])])
    return b.node("Unsqueeze", [y], {"axes": [2, 3]})


def blk_norm(b, v):
    C = b.shape(v)[1]
    return b.node("InstanceNormalization", [v, b.const(b.weight([C], 0.5) + 1, 0.0),
                                            b.const(b.weight([C], 0.3), 0.0)])


def blk_misc(b, v):
    sh = b.shape(v)
    r = len(sh)
    kind = b.pick(["gather", "tile", "expand", "sqrt", "reciprocal"])
    if kind == "gather":
        ax = b.r(0, r - 1)
        idx = np.array(b.rng.integers(0, sh[ax], b.r(1, 3)), np.int64) if b.p(0.7) else \
            np.array(b.r(0, sh[ax] - 1), np.int64)
        name = b.fresh("i")
        b.g.inits[name] = idx
        b.env[name] = torch.from_numpy(idx)
        return b.node("Gather", [v, name], {"axis": ax})
    if kind == "tile":
        reps = [1] * r
        reps[b.r(0, r - 1)] = 2
        return b.node("Tile", [v, b.ints(reps)])
    if kind == "expand":
        if r == 4 and sh[2] == 1 and sh[3] == 1:
            return b.node("Expand", [v, b.ints([sh[0], sh[1], b.r(2, 4), b.r(2, 4)])])
        return b.node("Expand", [v, b.ints([2] + [1] * r if b.p(0.3) else sh)])
    a = b.node("Add", [b.node("Abs", [v]), b.const(np.array(0.5, np.float32))])
    return b.node("Sqrt" if kind == "sqrt" else "Reciprocal", [a])


BLOCKS4 = [(blk_conv, 6), (blk_deconv, 2), (blk_pool, 3), (blk_global_pool, 1), (blk_act, 6),
           (blk_se, 2), (blk_binary, 5), (blk_residual, 3), (blk_concat, 3), (blk_split, 2),
           (blk_slice, 2), (blk_transpose, 1), (blk_reshape, 1), (blk_flatten_gemm, 1),
           (blk_matmul, 1), (blk_softmax, 1), (blk_reduce, 2), (blk_resize, 2),
           (blk_batchnorm, 1), (blk_pad, 1), (blk_squeeze_gemm, 1), (blk_norm, 1),
           (blk_misc, 1), (blk_hardswish_form, 1)]
BLOCKSN = [(blk_act, 6), (blk_binary, 5), (blk_softmax, 2), (blk_reduce, 1), (blk_transpose, 1),
           (blk_reshape, 3), (blk_matmul, 2), (blk_flatten_gemm, 2), (blk_concat, 1),
           (blk_split, 1), (blk_slice, 1), (blk_misc, 1)]


def generate(seed, index):
    rng = np.random.default_rng([seed & 0xffffffff, index & 0xffffffff, 15])
    opset = int(rng.choice([10, 11, 12, 13, 13, 14, 17]))
    g = Graph(opset, (seed * 1000003 + index) & 0xffffffff)
    b = Builder(g, rng)
    n_in = 1 if rng.random() < 0.85 else 2
    N = 1 if rng.random() < 0.9 else 2
    C, H, W = b.r(1, 8), b.r(1, 16), b.r(1, 16)
    if rng.random() < 0.5:
        H = W
    for j in range(n_in):
        shape = [N, C, H, W] if j == 0 or rng.random() < 0.7 else [N, C, 1, 1]
        g.inputs.append(("x%d" % j, shape))
    for name, v in g.inputs_values(0).items():
        b.env[name] = torch.from_numpy(v.astype(np.float64))
        b.live.append(name)
    steps = b.r(1, 7)
    done = 0
    attempts = 0
    while done < steps and attempts < 60:
        attempts += 1
        recent = b.live[-3:]
        v = b.pick(recent if rng.random() < 0.7 else b.live)
        if _rank(b, v) == 0:
            continue
        table = BLOCKS4 if _rank(b, v) == 4 else BLOCKSN
        fns, ws = zip(*table)
        fn = fns[int(rng.choice(len(fns), p=np.array(ws) / sum(ws)))]
        snap = (len(g.nodes), dict(g.inits), b.count, list(b.live))
        try:
            y = fn(b, v)
        except (Reject, IndexError, ValueError):  # a block that does not fit v
            del g.nodes[snap[0]:]
            g.inits = snap[1]
            b.live = snap[3]
            continue
        b.live.append(y)
        done += 1
    if not g.nodes:
        b.live.append(b.node("Relu", [b.live[0]]))
    prune_outputs(g, b)
    return g


def prune_outputs(g, b=None):
    """Outputs: every float value no node reads (at most 3, the latest)."""
    used = {i for n in g.nodes for i in n.inputs}
    produced = [o for n in g.nodes if n.op != "Constant" for o in n.outputs]
    leaves = [o for o in produced if o not in used]
    g.outputs = leaves[-3:] if leaves else produced[-1:]
    prune(g)


def prune(g):
    """Drops nodes, initializers and inputs the outputs do not need."""
    need = set(g.outputs)
    keep = []
    for n in reversed(g.nodes):
        if any(o in need for o in n.outputs):
            keep.append(n)
            need.update(i for i in n.inputs if i)
    g.nodes = list(reversed(keep))
    g.inits = {k: v for k, v in g.inits.items() if k in need}
    g.inputs = [(n, s) for n, s in g.inputs if n in need]


# --------------------------------------------------------------------------
# Reductions (shrinking)
# --------------------------------------------------------------------------

def _is_activation(g, name, producers):
    if not name or name in g.inits:
        return False
    p = producers.get(name)
    return p is None or p.op != "Constant"


def reductions(g):
    """Candidate smaller graphs, the most reducing first."""
    env = evaluate(g, g.inputs_values(0), want_all=True)
    producers = {o: n for n in g.nodes for o in n.outputs}
    # one output
    if len(g.outputs) > 1:
        for o in g.outputs:
            c = g.copy()
            c.outputs = [o]
            prune(c)
            yield c
    # cut at a node's input: the value becomes a graph input
    for k, n in enumerate(g.nodes):
        for i in n.inputs:
            if _is_activation(g, i, producers) and i in producers:
                c = g.copy()
                c.inputs.append((i, list(env[i].shape)))
                c.nodes = [m for m in c.nodes if i not in m.outputs]
                prune(c)
                if c.nodes:
                    yield c
    # bypass a node: its readers read one of its inputs of the same shape
    for k in reversed(range(len(g.nodes))):
        n = g.nodes[k]
        if len(n.outputs) != 1 or n.op == "Constant":
            continue
        out = n.outputs[0]
        for i in n.inputs:
            if not _is_activation(g, i, producers) or list(env[i].shape) != list(env[out].shape):
                continue
            if i in g.outputs and out in g.outputs:
                continue
            c = g.copy()
            del c.nodes[k]
            for m in c.nodes:
                m.inputs = [i if x == out else x for x in m.inputs]
            c.outputs = [i if x == out else x for x in c.outputs]
            if any(x in {nm for nm, _ in c.inputs} for x in c.outputs):
                continue
            prune(c)
            if c.nodes:
                yield c
    # drop one input of a variadic node (Concat, Sum)
    for k, n in enumerate(g.nodes):
        if n.op in ("Concat", "Sum") and len(n.inputs) > 2:
            for j in range(len(n.inputs)):
                c = g.copy()
                del c.nodes[k].inputs[j]
                prune(c)
                yield c
    # halve a graph input's spatial size
    for j, (name, shape) in enumerate(g.inputs):
        for ax in range(2, len(shape)):
            if shape[ax] > 1:
                c = g.copy()
                s = list(shape)
                s[ax] = (s[ax] + 1) // 2
                c.inputs[j] = (name, s)
                yield c
