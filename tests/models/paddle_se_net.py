#!/usr/bin/python3
"""A small PP-LCNet-style net in Paddle2ONNX's export forms (issue 15 item 2).

    x [1,3,32,32] -> Conv 3x3 s2 (3->16) -> HardSwish
      -> depthwise Conv 3x3 (16) -> ReLU6 -> squeeze-and-excitation
         (GlobalAveragePool, 1x1 Conv 16->4, Relu, 1x1 Conv 4->16,
          HardSigmoid, Mul)
      -> 1x1 Conv 16->32 -> HardSwish
      -> depthwise Conv 3x3 s2 (32) -> ReLU6
      -> GlobalAveragePool -> Flatten -> MatMul + Add -> logits [1,10]

The forms Paddle2ONNX emits, built with the onnx helper API:
- HardSwish as Add(x, 3) -> Clip(0, 6) -> Mul(x, .) -> Div(., 6);
- HardSigmoid as Mul(x, 1/6) -> Add(., 0.5) -> Clip(0, 1) (Paddle's slope
  0.1666667 and offset 0.5);
- ReLU6 as Clip(0, 6);
- Clip with min/max as attributes up to opset 10 (--opset 10, the default;
  opset 11 made them inputs) and as inputs at opset 11+ (--opset 13);
- every scalar operand (3, 6, 1/6, 0.5, the Clip bounds at opset 13, the
  classifier bias) a Constant node rather than an initializer, node names
  like Paddle2ONNX's (p2o.Conv.0, ...);
- the classifier as MatMul + Add (Paddle's Linear), not Gemm.
The reference is PyTorch's F32 result of the same weights. Writes
model.onnx, input.npz and reference.npz into --out; generate.sh draws the
calibration samples (paddle_se_net_int8). Seeded. Run with /usr/bin/python3.
"""
import argparse
import os

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, checker, helper, numpy_helper


class Builder:
    """Paddle2ONNX-style nodes: names p2o.OP.N, scalars as Constant nodes."""

    def __init__(self, opset: int):
        self.opset, self.nodes, self.inits, self.count = opset, [], [], {}

    def name(self, op: str) -> str:
        n = self.count.get(op, 0)
        self.count[op] = n + 1
        return "p2o.%s.%d" % (op, n)

    def node(self, op, inputs, **attrs) -> str:
        name = self.name(op)
        out = name + ".out"
        self.nodes.append(helper.make_node(op, inputs, [out], name=name, **attrs))
        return out

    def const(self, value) -> str:
        """A Constant node (Paddle2ONNX's scalar operands)."""
        arr = np.asarray(value, np.float32)
        name = self.name("Constant")
        self.nodes.append(helper.make_node("Constant", [], [name + ".out"], name=name,
                                           value=numpy_helper.from_array(arr, name)))
        return name + ".out"

    def weight(self, name: str, arr: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def clip(self, x: str, lo: float, hi: float) -> str:
        if self.opset < 11:  # min/max attributes (opsets 6-10)
            return self.node("Clip", [x], min=lo, max=hi)
        return self.node("Clip", [x, self.const(lo), self.const(hi)])

    def hardswish(self, x: str) -> str:
        cl = self.clip(self.node("Add", [x, self.const(3.0)]), 0.0, 6.0)
        return self.node("Div", [self.node("Mul", [x, cl]), self.const(6.0)])

    def hardsigmoid(self, x: str) -> str:
        scaled = self.node("Mul", [x, self.const(0.1666667)])
        return self.clip(self.node("Add", [scaled, self.const(0.5)]), 0.0, 1.0)

    def conv(self, x: str, w: str, b: str, stride=1, group=1) -> str:
        k = self.weights[w].shape[-1]
        return self.node("Conv", [x, w, b], kernel_shape=[k, k], strides=[stride, stride],
                         pads=[k // 2] * 4, group=group)


def make_weights(rng: np.random.Generator) -> dict:
    def conv(oc, icg, k):  # He-style scale: activations stay O(1)
        return (rng.standard_normal((oc, icg, k, k)) * np.sqrt(2.0 / (icg * k * k))).astype(np.float32)

    def bias(n):
        return (rng.standard_normal(n) * 0.1).astype(np.float32)

    return {
        "conv0.w": conv(16, 3, 3), "conv0.b": bias(16),
        "dw1.w": conv(16, 1, 3), "dw1.b": bias(16),
        "se.fc1.w": conv(4, 16, 1), "se.fc1.b": bias(4),
        "se.fc2.w": conv(16, 4, 1), "se.fc2.b": bias(16),
        "pw2.w": conv(32, 16, 1), "pw2.b": bias(32),
        "dw3.w": conv(32, 1, 3), "dw3.b": bias(32),
        "fc.w": (rng.standard_normal((32, 10)) * np.sqrt(1.0 / 32)).astype(np.float32),
        "fc.b": bias(10),
    }


def build(w: dict, opset: int):
    g = Builder(opset)
    g.weights = w
    for name, arr in w.items():
        if name != "fc.b":
            g.weight(name, arr)
    x = "x"
    t = g.hardswish(g.conv(x, "conv0.w", "conv0.b", stride=2))
    t = g.clip(g.conv(t, "dw1.w", "dw1.b", group=16), 0.0, 6.0)
    s = g.node("GlobalAveragePool", [t])
    s = g.node("Relu", [g.conv(s, "se.fc1.w", "se.fc1.b")])
    s = g.hardsigmoid(g.conv(s, "se.fc2.w", "se.fc2.b"))
    t = g.node("Mul", [t, s])
    t = g.hardswish(g.conv(t, "pw2.w", "pw2.b"))
    t = g.clip(g.conv(t, "dw3.w", "dw3.b", stride=2, group=32), 0.0, 6.0)
    t = g.node("Flatten", [g.node("GlobalAveragePool", [t])], axis=1)
    t = g.node("MatMul", [t, "fc.w"])
    fc_b = g.name("Constant")
    g.nodes.append(helper.make_node("Constant", [], ["fc.b"], name=fc_b,
                                    value=numpy_helper.from_array(w["fc.b"], "fc.b")))
    g.nodes.append(helper.make_node("Add", [t, "fc.b"], ["logits"], name=g.name("Add")))
    graph = helper.make_graph(
        g.nodes, "paddle_se_net",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
        initializer=g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="paddle2onnx-style")
    model.ir_version = 7
    checker.check_model(model)
    return model


def reference(x: np.ndarray, w: dict) -> np.ndarray:
    t_ = {k: torch.from_numpy(v) for k, v in w.items()}
    hswish = lambda t: t * torch.clamp(t + 3, 0, 6) / 6
    hsig = lambda t: torch.clamp(t * np.float32(0.1666667) + 0.5, 0, 1)
    conv = lambda t, n, s=1, g=1: F.conv2d(t, t_[n + ".w"], t_[n + ".b"], stride=s,
                                           padding=t_[n + ".w"].shape[-1] // 2, groups=g)
    t = hswish(conv(torch.from_numpy(x), "conv0", 2))
    t = torch.clamp(conv(t, "dw1", g=16), 0, 6)
    s = F.adaptive_avg_pool2d(t, 1)
    s = hsig(conv(F.relu(conv(s, "se.fc1")), "se.fc2"))
    t = hswish(conv(t * s, "pw2"))
    t = torch.clamp(conv(t, "dw3", 2, 32), 0, 6)
    t = torch.flatten(F.adaptive_avg_pool2d(t, 1), 1)
    return (t @ t_["fc.w"] + t_["fc.b"]).numpy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--opset", type=int, default=10,
                        help="10: Clip bounds as attributes; 11+: as Constant-node inputs")
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    w = make_weights(rng)
    x = rng.standard_normal((1, 3, 32, 32)).astype(np.float32)
    onnx.save(build(w, args.opset), os.path.join(args.out, "model.onnx"))
    np.savez(os.path.join(args.out, "input.npz"), x=x)
    np.savez(os.path.join(args.out, "reference.npz"), logits=reference(x, w))
    print("paddle_se_net (opset %d): model.onnx, input.npz, reference.npz in %s"
          % (args.opset, args.out))


if __name__ == "__main__":
    main()
