#!/usr/bin/python3
"""Elementwise layers that can run in place (docs/DESIGN.md, AddressAssign).

A 1x1 conv to 64 channels at 256x256, SiLU (x * sigmoid(x)), ReLU + 0.5 and a
1x1 conv back: with layer groups off, each op is a sliced group of its own,
and the SiLU's multiply and the add each overwrite the value they read for
the last time. Writes OUT/model.onnx, input.npz and reference.npz (PyTorch's
output). Run with /usr/bin/python3 (Debian's torch and onnx)."""
import argparse
import os

import numpy as np
import torch
from torch import nn


class InPlaceNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.widen = nn.Conv2d(8, 64, 1)
        self.narrow = nn.Conv2d(64, 8, 1)

    def forward(self, x):
        c = self.widen(x)
        y = c * torch.sigmoid(c)
        return self.narrow(torch.relu(y) + 0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = InPlaceNet().eval()
    x = torch.randn(1, 8, 256, 256, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        y = model(x)
    os.makedirs(args.out, exist_ok=True)
    torch.onnx.export(model, x, os.path.join(args.out, "model.onnx"), opset_version=13,
                      input_names=["input"], output_names=["out"])
    np.savez(os.path.join(args.out, "input.npz"), input=x.numpy())
    np.savez(os.path.join(args.out, "reference.npz"), out=y.numpy())
    print("inplace_net: %s, output %s" % (args.out, tuple(y.shape)))


if __name__ == "__main__":
    main()
