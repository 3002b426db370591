"""Writes a copy of an ONNX model whose only output is the input of its last Sigmoid."""
import sys

import onnx

src, dst = sys.argv[1], sys.argv[2]
m = onnx.load(src)
g = m.graph
last = [n for n in g.node if n.op_type == "Sigmoid"][-1]
name = last.input[0]
g.node.remove(last)
del g.output[:]
g.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
onnx.save(m, dst)
