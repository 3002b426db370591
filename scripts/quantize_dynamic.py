"""Dynamic int8 quantization of an f32 ONNX model, writing the graph onnxruntime's
quantize_dynamic writes (QOperator / IntegerOps form), so that troupe meets the pattern most
quantized transformers ship in:

  - MatMul with a constant B (an initializer, or a Transpose of one: a tied LM head, which an
    exporter's constant folding would have turned into an initializer):
      DynamicQuantizeLinear(x) -> x_quantized, x_scale, x_zero_point
      MatMulInteger(x_quantized, W_quantized, x_zero_point, W_zero_point) -> Cast(to float)
      -> Mul(., Mul(x_scale, W_scale))           [the original bias Add stays, reading it]
    One DynamicQuantizeLinear per activation, shared by every MatMulInteger that reads it
    (Q/K/V, gate/up). MatMuls of two activations (attention's Q.K^T and .V) stay f32, as
    quantize_dynamic leaves them with MatMulConstBOnly.
  - Conv with constant weights: DynamicQuantizeLinear(x) -> ConvInteger(x_q, W_q, x_zp, W_zp)
    -> Cast -> Mul(x_scale * W_scale) [-> Add(Reshape(bias, [1, -1, 1, ...]))].
  - Gather of a constant table (embeddings): Gather on a uint8 table, asymmetric per tensor,
    then DequantizeLinear(table_scale, table_zero_point).
  - Weights: int8 symmetric (QInt8: scale max|w| / 127, zero point 0) by default; --weight-type
    u8 gives uint8 asymmetric (QUInt8: the range widened to hold 0, scale range / 255);
    --per-channel gives one scale (and zero point) per output column of a MatMul's B, per
    output channel of a Conv's W (the Mul's scale then has the shape to broadcast over it).

Before quantizing, as onnxruntime's pre-processing does: Constant nodes become initializers, a
BatchNormalization after a Conv folds into it, and a model below opset 11 moves to 13 (scripts/
quantize_qdq.py's checks). Names follow onnxruntime's: <x>_quantized / _scale / _zero_point,
<node>_quant, <W>_quantized.

usage: quantize_dynamic.py IN.onnx OUT.onnx [--weight-type s8|u8] [--per-channel] [--reduce-range]
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quantize_qdq import constants_to_initializers, fold_batch_norms, prune_initializers, to_opset_13  # noqa: E402


def quantize_weight(w, weight_type, axis, reduce_range=False):
    """(q, scale, zero_point): per tensor when axis is None, else one per index of `axis`.
    reduce_range: 7-bit weights as onnxruntime's reduce_range=True writes them (s8 in [-64, 64],
    u8 in [0, 127]), which it advises for CPUs without VNNI."""
    if axis is None:
        flat = w.reshape(1, -1)
    else:
        flat = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
    lo = np.minimum(flat.min(axis=1), 0.0).astype(np.float64)
    hi = np.maximum(flat.max(axis=1), 0.0).astype(np.float64)
    if weight_type == "s8":
        absmax = np.maximum(-lo, hi)
        top = 64.0 if reduce_range else 127.0
        scale = np.where(absmax > 0, absmax / top, 1.0).astype(np.float32)
        zp = np.zeros(scale.shape, np.int8)
        qmin, qmax, dtype = -int(top), int(top), np.int8
    else:
        top = 127 if reduce_range else 255
        scale = np.where(hi > lo, (hi - lo) / float(top), 1.0).astype(np.float32)
        zp = np.clip(np.rint(-lo / scale), 0, top).astype(np.uint8)
        qmin, qmax, dtype = 0, top, np.uint8
    shape = [1] * w.ndim
    if axis is not None:
        shape[axis] = -1
    else:
        scale, zp = scale.reshape(()), zp.reshape(())
    q = np.rint(w.astype(np.float64) / scale.reshape(shape)) + zp.astype(np.float64).reshape(shape)
    return np.clip(q, qmin, qmax).astype(dtype), scale, zp


class Quantizer:
    def __init__(self, model, weight_type, per_channel, reduce_range=False):
        self.model, self.g = model, model.graph
        self.weight_type, self.per_channel, self.reduce_range = weight_type, per_channel, reduce_range
        self.inits = {t.name: t for t in self.g.initializer}
        self.new_inits, self.dql = [], {}
        self.counts = {"MatMul": 0, "Conv": 0, "Gather": 0}

    def init(self, name, array):
        self.new_inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def constant_b(self, name):
        """B's value when it is an initializer, or a Transpose of one (folded here)."""
        if name in self.inits:
            return numpy_helper.to_array(self.inits[name])
        producer = next((n for n in self.g.node if name in n.output), None)
        if producer is not None and producer.op_type == "Transpose" and producer.input[0] in self.inits:
            perm = next((list(a.ints) for a in producer.attribute if a.name == "perm"), None)
            return np.transpose(numpy_helper.to_array(self.inits[producer.input[0]]), perm)
        return None

    def activation(self, x, nodes):
        """DynamicQuantizeLinear of x, one per tensor: (x_quantized, x_scale, x_zero_point)."""
        if x not in self.dql:
            outs = [x + "_quantized", x + "_scale", x + "_zero_point"]
            nodes.append(helper.make_node("DynamicQuantizeLinear", [x], outs, name=x + "_QuantizeLinear"))
            self.dql[x] = outs
        return self.dql[x]

    def weight(self, base, w, axis):
        q, scale, zp = quantize_weight(w, self.weight_type, axis if self.per_channel else None, self.reduce_range)
        return (self.init(base + "_quantized", q), self.init(base + "_scale", scale), self.init(base + "_zero_point", zp),
                scale)

    def integer_op(self, node, op_type, w, axis, attrs, nodes):
        """x -> <op>Integer -> Cast -> Mul(x_scale * W_scale): the float result under the node's
        output name, or `<output>_scaled` when a bias Add follows (returned)."""
        xq, xs, xz = self.activation(node.input[0], nodes)
        wq, ws, wz, scale = self.weight(node.input[1], w, axis)
        name = node.name + "_quant"
        out = node.output[0] + "_output_quantized"
        nodes.append(helper.make_node(op_type, [xq, wq, xz, wz], [out], name=name, **attrs))
        nodes.append(helper.make_node("Cast", [out], [out + "_cast_output"], name=out + "_cast", to=TensorProto.FLOAT))
        if scale.ndim == 1 and op_type == "ConvInteger":
            # One scale per output channel of [N, M, H, W]: [M, 1, 1].
            ws = self.init(ws + "_reshaped", scale.reshape([-1] + [1] * (w.ndim - 2)))
        nodes.append(helper.make_node("Mul", [xs, ws], [name + "_scales_mul:0"], name=name + "_scales_mul"))
        return out + "_cast_output", name + "_scales_mul:0", name

    def matmul(self, node, nodes):
        w = self.constant_b(node.input[1])
        if w is None or w.dtype != np.float32 or w.ndim != 2 or node.input[0] in self.inits:
            return False
        cast, scales, name = self.integer_op(node, "MatMulInteger", w, 1, {}, nodes)
        nodes.append(helper.make_node("Mul", [cast, scales], [node.output[0]], name=name + "_output_scale_mul"))
        self.counts["MatMul"] += 1
        return True

    def conv(self, node, nodes):
        if node.input[1] not in self.inits or node.input[0] in self.inits:
            return False
        w = numpy_helper.to_array(self.inits[node.input[1]])
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        cast, scales, name = self.integer_op(node, "ConvInteger", w, 0, attrs, nodes)
        bias = node.input[2] if len(node.input) > 2 and node.input[2] else None
        out = node.output[0] + "_scaled" if bias else node.output[0]
        nodes.append(helper.make_node("Mul", [cast, scales], [out], name=name + "_output_scale_mul"))
        if bias:
            shape = self.init(bias + "_reshape_shape", np.array([1, -1] + [1] * (w.ndim - 2), np.int64))
            nodes.append(helper.make_node("Reshape", [bias, shape], [bias + "_reshape_output"], name=bias + "_reshape"))
            nodes.append(helper.make_node("Add", [out, bias + "_reshape_output"], [node.output[0]], name=name + "_bias_add"))
        self.counts["Conv"] += 1
        return True

    def gather(self, node, nodes):
        if node.input[0] not in self.inits:
            return False
        table = numpy_helper.to_array(self.inits[node.input[0]])
        if table.dtype != np.float32:
            return False
        q, scale, zp = quantize_weight(table, "u8", None)
        base = node.input[0]
        tq, ts, tz = (self.init(base + "_quantized", q), self.init(base + "_scale", scale),
                      self.init(base + "_zero_point", zp))
        out = node.output[0] + "_quantized"
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        nodes.append(helper.make_node("Gather", [tq, node.input[1]], [out], name=node.name + "_quant", **attrs))
        nodes.append(helper.make_node("DequantizeLinear", [out, ts, tz], [node.output[0]],
                                      name=node.output[0] + "_DequantizeLinear"))
        self.counts["Gather"] += 1
        return True

    def run(self):
        nodes = []
        for node in self.g.node:
            handled = {"MatMul": self.matmul, "Conv": self.conv, "Gather": self.gather}.get(node.op_type)
            if not (handled and handled(node, nodes)):
                nodes.append(node)
        # A DynamicQuantizeLinear of a graph input was placed before the first reader: fine.
        # Drop what the rewrite left unread (the Transpose of a folded tied head).
        del self.g.node[:]
        self.g.node.extend(nodes)
        self.g.initializer.extend(self.new_inits)
        drop_dead_nodes(self.g)
        prune_initializers(self.g)


def drop_dead_nodes(g):
    needed = {o.name for o in g.output}
    keep = []
    for n in reversed(list(g.node)):
        if any(o in needed for o in n.output):
            keep.append(n)
            needed.update(i for i in n.input if i)
    del g.node[:]
    g.node.extend(reversed(keep))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--weight-type", choices=["s8", "u8"], default="s8")
    ap.add_argument("--per-channel", action="store_true")
    ap.add_argument("--reduce-range", action="store_true", help="7-bit weights, as onnxruntime's reduce_range=True")
    a = ap.parse_args()

    model = onnx.load(a.src)
    g = model.graph
    constants_to_initializers(g)
    opset = next(o for o in model.opset_import if o.domain in ("", "ai.onnx"))
    if opset.version < 11:
        to_opset_13(model)
    folded = fold_batch_norms(g, {t.name: t for t in g.initializer})
    prune_initializers(g)
    q = Quantizer(model, a.weight_type, a.per_channel, a.reduce_range)
    q.run()
    onnx.save(model, a.dst)
    c = q.counts
    print(f"quantize_dynamic: {a.dst}: {c['MatMul']} MatMul, {c['Conv']} Conv, {c['Gather']} Gather quantized "
          f"({len(q.dql)} DynamicQuantizeLinear; weights {a.weight_type}, {'per channel' if a.per_channel else 'per tensor'}),"
          f" {folded} BatchNormalization folded")


if __name__ == "__main__":
    sys.exit(main())
