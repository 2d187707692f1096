#!/usr/bin/python3
"""Elementwise layers that can run in place (docs/DESIGN.md, AddressAssign).

A 1x1 conv to 64 channels at 256x256, SiLU (x * sigmoid(x)), ReLU + 0.5 and a
1x1 conv back: with layer groups off, each op is a sliced group of its own,
and the SiLU's multiply and the add each overwrite the value they read for
the last time. Writes OUT/model.onnx, input.npz and reference.npz (PyTorch's
output). Run with /usr/bin/python3 (Debian's torch and onnx)."""
import torch
from torch import nn

from common import generate


class InPlaceNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.widen = nn.Conv2d(8, 64, 1)
        self.narrow = nn.Conv2d(64, 8, 1)

    def forward(self, x):
        c = self.widen(x)
        y = c * torch.sigmoid(c)
        return self.narrow(torch.relu(y) + 0.5)


def build_model(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return InPlaceNet().eval()


def main() -> None:
    args, (y,), _ = generate(__doc__, build_model, (1, 8, 256, 256), ["out"], input_seed=1,
                             keep_batchnorm=False, fold_constants=True)
    print("inplace_net: %s, output %s" % (args.out, tuple(y.shape)))


if __name__ == "__main__":
    main()
