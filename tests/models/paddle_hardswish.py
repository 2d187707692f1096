#!/usr/bin/python3
"""Paddle2ONNX-style HardSwish between two convs (opset 10), issue 15.

    c = Conv(x, W)                                   x: [1,16,32,32], pads 1
    y = Conv(Div(Mul(c, Clip(Add(c, 3), 0, 6)), 6), W)

Paddle2ONNX writes HardSwish this way (no HardSwish op before opset 14):
Clip takes min/max as attributes at opset 10, the 3 is an initializer and
the 6 a Constant node, so both ways of giving a constant are covered. Both
convs share the 16x16x3x3 filter W. Built with the onnx helper API; the
reference is PyTorch's F32 result. Writes model.onnx, input.npz and
reference.npz into --out; generate.sh draws the calibration samples
(paddle_hardswish_int8). Seeded. Run with /usr/bin/python3.
"""
import argparse
import os

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper


def build(w: np.ndarray) -> onnx.ModelProto:
    conv = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1])
    nodes = [
        helper.make_node("Conv", ["x", "W"], ["c"], name="conv0", **conv),
        helper.make_node("Add", ["c", "three"], ["add"], name="add"),
        helper.make_node("Clip", ["add"], ["cl"], name="cl", min=0.0, max=6.0),
        helper.make_node("Mul", ["c", "cl"], ["mul"], name="mul"),
        helper.make_node("Constant", [], ["six"], name="six",
                         value=numpy_helper.from_array(np.array(6, np.float32), "six")),
        helper.make_node("Div", ["mul", "six"], ["hs"], name="hs"),
        helper.make_node("Conv", ["hs", "W"], ["y"], name="conv1", **conv),
    ]
    graph = helper.make_graph(
        nodes, "paddle_hardswish",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 32, 32])],
        initializer=[numpy_helper.from_array(w, "W"),
                     numpy_helper.from_array(np.array(3, np.float32), "three")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 10)],
                              producer_name="paddle2onnx-style")
    onnx.checker.check_model(model)
    return model


def reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    conv = lambda t: torch.nn.functional.conv2d(t, torch.from_numpy(w), padding=1)
    c = conv(torch.from_numpy(x))
    hs = c * torch.clamp(c + 3, 0, 6) / 6
    return conv(hs).numpy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    # Filter scaled so c spans a few units: every piece of the HardSwish
    # (below -3, the ramp, above 3) is reached.
    w = (rng.standard_normal((16, 16, 3, 3)) * 0.15).astype(np.float32)
    x = rng.standard_normal((1, 16, 32, 32)).astype(np.float32)
    onnx.save(build(w), os.path.join(args.out, "model.onnx"))
    np.savez(os.path.join(args.out, "input.npz"), x=x)
    np.savez(os.path.join(args.out, "reference.npz"), y=reference(x, w))
    print("paddle_hardswish: model.onnx, input.npz, reference.npz in %s" % args.out)


if __name__ == "__main__":
    main()
