#!/usr/bin/python3
"""A net made of the ops that should move no bytes: DDR views and in-place
concats (docs/DESIGN.md, AddressAssign).

PyTorch's exporter writes the traced reshape arithmetic a real model has:
view(n, c, h*w), unsqueeze, flatten, reshape back, squeeze of an unsqueeze,
a channel split (torch.split), concats of conv outputs (a dense block) and a
Flatten before the classifier; an ONNX Identity is inserted after the stem,
as exporters leave them. Writes OUT/model.onnx, input.npz and reference.npz
(PyTorch's outputs). Run with /usr/bin/python3 (Debian's torch and onnx).
"""
import argparse
import os

import numpy as np
import onnx
import torch
from onnx import helper
from torch import nn


class ViewsNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 32, 3, padding=1)
        self.a = nn.Conv2d(16, 16, 3, padding=1)
        self.b = nn.Conv2d(16, 16, 1)
        self.c = nn.Conv2d(32, 32, 3, padding=1)
        self.d = nn.Conv2d(64, 32, 1)
        self.head = nn.Conv2d(96, 8, 1)
        self.fc = nn.Linear(8 * 16 * 16, 10)

    def forward(self, x):
        y = torch.relu(self.stem(x))
        n, c, h, w = y.shape
        y = y.view(n, c, h * w).unsqueeze(-1).flatten(2).reshape(n, c, h, w)
        y = torch.squeeze(y.unsqueeze(0), 0)
        y1, y2 = torch.split(y, 16, dim=1)
        z = torch.cat([torch.relu(self.a(y1)), torch.relu(self.b(y2))], dim=1)
        z = torch.cat([z, torch.relu(self.c(z))], dim=1)
        z = torch.cat([z, torch.relu(self.d(z))], dim=1)
        z = self.head(z)
        return z, self.fc(torch.flatten(z, 1))


def insert_identity(path: str) -> None:
    """An Identity between the stem's Relu and its consumers."""
    model = onnx.load(path)
    graph = model.graph
    relu = next(node for node in graph.node if node.op_type == "Relu")
    old, new = relu.output[0], relu.output[0] + "_identity"
    for node in graph.node:
        for i, name in enumerate(node.input):
            if name == old:
                node.input[i] = new
    index = list(graph.node).index(relu)
    graph.node.insert(index + 1, helper.make_node("Identity", [old], [new], name="/Identity"))
    onnx.checker.check_model(model)
    onnx.save(model, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    model = ViewsNet().eval()
    x = torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(args.seed + 1))
    with torch.no_grad():
        features, logits = model(x)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "model.onnx")
    torch.onnx.export(model, x, path, opset_version=13, input_names=["input"],
                      output_names=["features", "logits"])
    insert_identity(path)
    np.savez(os.path.join(args.out, "input.npz"), input=x.numpy())
    np.savez(os.path.join(args.out, "reference.npz"), features=features.numpy(),
             logits=logits.numpy())
    ops = {}
    for node in onnx.load(path).graph.node:
        ops[node.op_type] = ops.get(node.op_type, 0) + 1
    print("views_net: %s ops: %s" % (path, " ".join("%s=%d" % kv for kv in sorted(ops.items()))))


if __name__ == "__main__":
    main()
