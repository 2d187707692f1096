"""Helpers shared by the test model scripts (tests/models/*.py).

Import with the scripts' directory on sys.path (it is when a script in this
directory runs: `python3 tests/models/NAME.py`). Run with /usr/bin/python3,
which sees Debian's torch, onnx and numpy.
"""
import collections
import os

import numpy as np
import onnx
import torch
from torch import nn


def randomize_batchnorm(model: nn.Module, gen: torch.Generator) -> int:
    """Seeded random BatchNorm parameters and running statistics for every
    BatchNorm2d in `model` (or `model` itself), in module order: weight in
    [0.5, 1.5), bias ~ N(0, 0.1), running_mean ~ N(0, 0.1), running_var in
    [0.5, 2.0). Freshly initialized BatchNorm (weight 1, bias 0, mean 0,
    var 1) is close to the identity, so folding it would go untested; these
    values make every BatchNormalization node do real work. The draws are
    those of the per-module helpers in resnet_style.py and tiny_nets.py.
    Returns the number of BatchNorm2d modules changed."""
    count = 0
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            randomize_bn(m, gen)
            count += 1
    return count


def randomize_bn(bn: nn.BatchNorm2d, gen: torch.Generator) -> None:
    """One BatchNorm2d's parameters and statistics, drawn as randomize_batchnorm
    does (for scripts that interleave other draws between the modules)."""
    c = bn.num_features
    with torch.no_grad():
        bn.weight.copy_(torch.rand(c, generator=gen) + 0.5)
        bn.bias.copy_(torch.randn(c, generator=gen) * 0.1)
        bn.running_mean.copy_(torch.randn(c, generator=gen) * 0.1)
        bn.running_var.copy_(torch.rand(c, generator=gen) * 1.5 + 0.5)


def export_with_batchnorm(model: nn.Module, x: torch.Tensor, out_dir: str, tag: str,
                          input_name: str = "input", output_name: str = "logits",
                          opset: int = 13) -> None:
    """Runs the eval-mode `model` on `x` and writes out_dir/model.onnx
    (opset 13 unless `opset` says otherwise, no constant folding, TrainingMode.PRESERVE so that
    BatchNormalization stays in the graph: kiln folds it itself), input.npz
    and reference.npz (PyTorch's output). Fails if the export lost every
    BatchNormalization node; prints the op counts."""
    os.makedirs(out_dir, exist_ok=True)
    with torch.no_grad():
        y = model(x)
    path = os.path.join(out_dir, "model.onnx")
    # TrainingMode.EVAL would fuse BN into the convs (torch's eval peephole);
    # PRESERVE exports the eval-mode model as is, BatchNormalization included.
    torch.onnx.export(model, x, path, opset_version=opset, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.PRESERVE,
                      input_names=[input_name], output_names=[output_name])
    np.savez(os.path.join(out_dir, "input.npz"), **{input_name: x.numpy()})
    np.savez(os.path.join(out_dir, "reference.npz"), **{output_name: y.numpy()})
    graph = onnx.load(path)
    onnx.checker.check_model(graph)
    ops = collections.Counter(node.op_type for node in graph.graph.node)
    if not ops["BatchNormalization"]:
        raise SystemExit("%s: export fused BatchNormalization away" % tag)
    print("%s: %s ops: %s; %s %s |max| %.3g" % (
        tag, path, " ".join("%s=%d" % kv for kv in sorted(ops.items())),
        output_name, tuple(y.shape), float(y.abs().max())))
