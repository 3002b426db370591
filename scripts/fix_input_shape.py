"""Writes a copy of an ONNX model whose inputs have fixed dimensions: NAME=1x3x48x192 ..."""
import sys

import onnx

src, dst, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
m = onnx.load(src)
inputs = {i.name: i for i in m.graph.input}
for spec in specs:
    name, dims = spec.split("=")
    if name not in inputs:
        sys.exit(f"{src}: no input '{name}' (inputs: {', '.join(inputs)})")
    shape = inputs[name].type.tensor_type.shape
    values = [int(d) for d in dims.split("x")]
    if len(values) != len(shape.dim):
        sys.exit(f"{src}: input '{name}' has rank {len(shape.dim)}, not {len(values)}")
    for d, v in zip(shape.dim, values):
        d.Clear()
        d.dim_value = v
onnx.save(m, dst)
