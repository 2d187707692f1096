#!/usr/bin/python3
"""torchvision classification models: exports model.onnx, input.npz and reference.npz.

The real architectures users bring, at full width and 1x3x224x224 with 1000
classes: ResNet-18 and ResNet-50 (basic and bottleneck residual blocks),
MobileNetV2 (inverted residuals, depthwise convs, ReLU6 as Clip) and
MobileNetV3-Small (squeeze-and-excitation, Hardswish/Hardsigmoid) and
EfficientNet-B0 (MBConv blocks, SiLU, squeeze-and-excitation with Sigmoid), from
Debian's python3-torchvision. Random initialization (weights=None: no
download, torchvision's own init) seeded by --seed, and seeded random
BatchNorm statistics (common.seeded_model), so the BatchNormalization
nodes, kept in the graph, do real work. Dropout is dropped by eval mode. Run
with /usr/bin/python3, which sees Debian's torch, torchvision, onnx and numpy.
"""
import torch
import torchvision

from common import deterministic, export_with_batchnorm, parse_args, seeded_input, seeded_model

ARCHS = {
    "resnet18": torchvision.models.resnet18,
    "resnet50": torchvision.models.resnet50,
    "mobilenet_v2": torchvision.models.mobilenet_v2,
    "mobilenet_v3_small": torchvision.models.mobilenet_v3_small,
    "efficientnet_b0": torchvision.models.efficientnet_b0,
}


def build_model(arch: str, seed: int) -> torch.nn.Module:
    return seeded_model(lambda: ARCHS[arch](weights=None), seed)


def main() -> None:
    args = parse_args(__doc__, lambda p: p.add_argument("--arch", required=True,
                                                         choices=sorted(ARCHS)))
    deterministic()
    model = build_model(args.arch, args.seed)
    x = seeded_input((1, 3, 224, 224), args.seed + 2)
    export_with_batchnorm(model, x, args.out, "tv_" + args.arch)


if __name__ == "__main__":
    main()
