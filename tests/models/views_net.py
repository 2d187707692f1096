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
import os

import onnx
import torch
from onnx import helper
from torch import nn

from common import format_ops, generate, op_counts


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


def build_model(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return ViewsNet().eval()


def main() -> None:
    args, _, _ = generate(__doc__, build_model, (1, 3, 16, 16), ["features", "logits"],
                          input_seed=1, keep_batchnorm=False, fold_constants=True)
    path = os.path.join(args.out, "model.onnx")
    insert_identity(path)
    print("views_net: %s ops: %s" % (path, format_ops(op_counts(onnx.load(path)))))


if __name__ == "__main__":
    main()
