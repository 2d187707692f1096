#!/usr/bin/env bash
# generate.sh NAME OUT_DIR [PYTHON]: writes NAME's model.onnx, input.npz and
# reference.npz (PyTorch's outputs) into OUT_DIR, once. The one place that maps
# a bundled example's name to the script and arguments that make it.
set -euo pipefail
name=$1 out=$2 py=${3:-/usr/bin/python3}
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$out/model.onnx" ] && exit 0
case "$name" in
  stylegan2_64) "$py" "$here/stylegan2.py" --res 64 --noise const --out "$out" ;;
  stylegan2_64_random) "$py" "$here/stylegan2.py" --res 64 --noise random --out "$out" ;;
  stylegan2_256) "$py" "$here/stylegan2.py" --res 256 --noise const --out "$out" ;;
  *) "$py" "$here/$name.py" --out "$out" ;;
esac
