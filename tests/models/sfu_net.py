#!/usr/bin/python3
"""Special functions as BM1684X computes them on its SFU, one per output:
sqrt (x * the SFU's 1/sqrt(x)) of positive values and of zeros, exp,
sigmoid, silu, tanh, erf, gelu, elu and selu (a range reduction and the
SFU's Taylor series; a sigmoid's reciprocal by 1/sqrt squared; erf by the
Chebyshev fit of erfc whose coefficients the chip keeps in static memory),
reciprocal (the chip's division), log and softplus (the exponent from the
bits, an atanh series on the SFU), the sigmoid and tanh over values
from about -60 to 60, after a conv whose 70 channels span two lane groups. Writes
OUT/model.onnx, input.npz and reference.npz (PyTorch's outputs). Run with
/usr/bin/python3 (Debian's torch and onnx).
"""
import os

import onnx
import torch
from torch import nn

from common import format_ops, generate, require_ops


class SfuNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 70, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        wide = y * 20.0
        return (torch.sqrt(y * y + 1e-3), torch.sqrt(torch.relu(y)), torch.exp(y),
                torch.sigmoid(wide), y * torch.sigmoid(y), torch.tanh(wide),
                torch.erf(y), nn.functional.gelu(y * 3.0), nn.functional.elu(y * 3.0, alpha=0.7),
                torch.selu(y), torch.reciprocal(y * y + 0.25) - torch.reciprocal(-0.5 - y * y),
                torch.log(y * y + 1e-3), nn.functional.softplus(y * 3.0))


def build_model(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return SfuNet().eval()


def main() -> None:
    outputs = ["sqrt_square", "sqrt_relu", "exp", "sigmoid_wide", "silu", "tanh_wide", "erf", "gelu",
               "elu", "selu", "reciprocal", "log", "softplus"]
    args, _, _ = generate(__doc__, build_model, (1, 3, 20, 24), outputs)
    path = os.path.join(args.out, "model.onnx")
    ops = require_ops(onnx.load(path), "sfu_net", ["Sqrt", "Exp", "Sigmoid", "Tanh", "Erf", "Elu",
                                                      "Selu", "Reciprocal", "Log", "Softplus"])
    print("sfu_net: %s ops: %s" % (path, format_ops(ops)))


if __name__ == "__main__":
    main()
