"""Writes the transformer test models: small, seeded random weights, but the graphs that
exporters (torch.onnx of Hugging Face models, opset 17) really write, op for op.

  bert_tiny  BERT-style encoder. Inputs input_ids and attention_mask, int64 [batch_size,
             sequence_length]; outputs last_hidden_state [batch_size, sequence_length, 256] and
             pooler_output [batch_size, 256]. Vocabulary 8192, 512 positions, 4 layers, hidden
             256, 4 heads of 64, FFN 1024. Word + position (Range over the input's length) +
             token-type embeddings by Gather; LayerNormalization (opset 17) in layers 0 and 2,
             and its spelled-out form (ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add) after
             the embeddings and in layers 1 and 3; attention as MatMul Q.K^T on heads made by
             Reshape/Transpose, scaled by Div (even layers) or Mul (odd layers), plus the additive
             mask (1 - Cast(Unsqueeze(Unsqueeze(attention_mask)))) * float32 min, Softmax, .V;
             Gelu as x * 0.5 * (1 + Erf(x / sqrt 2)); the pooler as Gather of token 0, Gemm, Tanh.
  lm_tiny    decoder-only LM (Llama/SmolLM-style). Input input_ids int64 [1, sequence_length];
             outputs logits [1, sequence_length, 49152] and next_token_probs [1, 1, 49152] (the
             Softmax of the last position's logits over the vocabulary). 4 layers, hidden 256, 4
             heads of 64, gated MLP 1024. Rotary embedding with cos/sin computed in the graph
             (Range/Cast/Unsqueeze/Mul/Concat/Cos/Sin, rotate_half by Slice/Neg/Concat); RMSNorm
             as Pow/ReduceMean/Add/Sqrt/Div/Mul; SiLU as x * Sigmoid(x); causal mask from
             Trilu(ConstantOfShape) added as a Where-made additive mask (even layers) or applied
             to the scores by Where (odd layers); the head tied to the embedding table through a
             Transpose node (one copy of the 49152 x 256 table in the file).

Weights: numpy's seeded generator, so the bytes written are the same on every run.

usage: make_transformer_models.py OUT_DIR [--only bert_tiny|lm_tiny]
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
F32_MIN = float(np.finfo(np.float32).min)


class Graph:
    """A node list under construction: unique names, initializers from numpy arrays."""

    def __init__(self, name, seed):
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], [], {}

    def fresh(self, base):
        k = self.count.get(base, 0)
        self.count[base] = k + 1
        return f"{base}_{k}" if k else base

    def const(self, name, value, dtype=np.float32):
        name = self.fresh(name)
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype), name))
        return name

    def weight(self, name, shape, std):
        return self.const(name, self.rng.normal(0.0, std, shape).astype(np.float32))

    def op(self, op_type, inputs, name, outputs=1, **attrs):
        node_name = self.fresh(name)
        outs = [f"{node_name}_output_{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=node_name, **attrs))
        return outs[0] if outputs == 1 else outs

    def model(self, inputs, outputs):
        g = helper.make_graph(self.nodes, self.name, inputs, outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="troupe-make_transformer_models")
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m


def linear(g, x, n_in, n_out, name, bias=True):
    """x @ W (+ b), as torch.onnx writes nn.Linear on a 3-d input."""
    y = g.op("MatMul", [x, g.weight(f"{name}.weight", (n_in, n_out), n_in ** -0.5)], f"{name}/MatMul")
    if bias:
        y = g.op("Add", [y, g.weight(f"{name}.bias", (n_out,), 0.02)], f"{name}/Add")
    return y


def layer_norm(g, x, hidden, name, spelled):
    gamma = g.const(f"{name}.weight", 1.0 + g.rng.normal(0.0, 0.1, hidden))
    beta = g.const(f"{name}.bias", g.rng.normal(0.0, 0.1, hidden))
    if not spelled:
        return g.op("LayerNormalization", [x, gamma, beta], f"{name}/LayerNormalization", axis=-1, epsilon=1e-12)
    mean = g.op("ReduceMean", [x], f"{name}/ReduceMean", axes=[-1], keepdims=1)
    d = g.op("Sub", [x, mean], f"{name}/Sub")
    sq = g.op("Pow", [d, g.const(f"{name}/Constant", 2.0)], f"{name}/Pow")
    var = g.op("ReduceMean", [sq], f"{name}/ReduceMean", axes=[-1], keepdims=1)
    std = g.op("Sqrt", [g.op("Add", [var, g.const(f"{name}/Constant", 1e-12)], f"{name}/Add")], f"{name}/Sqrt")
    y = g.op("Div", [d, std], f"{name}/Div")
    return g.op("Add", [g.op("Mul", [y, gamma], f"{name}/Mul"), beta], f"{name}/Add")


def rms_norm(g, x, hidden, name):
    w = g.const(f"{name}.weight", 1.0 + g.rng.normal(0.0, 0.1, hidden))
    var = g.op("ReduceMean", [g.op("Pow", [x, g.const(f"{name}/Constant", 2.0)], f"{name}/Pow")], f"{name}/ReduceMean",
               axes=[-1], keepdims=1)
    rms = g.op("Sqrt", [g.op("Add", [var, g.const(f"{name}/Constant", 1e-5)], f"{name}/Add")], f"{name}/Sqrt")
    return g.op("Mul", [w, g.op("Div", [x, rms], f"{name}/Div")], f"{name}/Mul")


def gelu_erf(g, x, name):
    e = g.op("Erf", [g.op("Div", [x, g.const(f"{name}/Constant", 1.4142135381698608)], f"{name}/Div")], f"{name}/Erf")
    y = g.op("Mul", [x, g.op("Add", [e, g.const(f"{name}/Constant", 1.0)], f"{name}/Add")], f"{name}/Mul")
    return g.op("Mul", [y, g.const(f"{name}/Constant", 0.5)], f"{name}/Mul")


def heads(g, x, n_heads, head_dim, name, perm=(0, 2, 1, 3)):
    """[b, s, h*d] -> [b, h, s, d] (or K^T's [b, h, d, s] by perm 0,2,3,1)."""
    r = g.op("Reshape", [x, g.const(f"{name}/shape", [0, 0, n_heads, head_dim], np.int64)], f"{name}/Reshape")
    return g.op("Transpose", [r], f"{name}/Transpose", perm=list(perm))


def merge_heads(g, x, hidden, name):
    t = g.op("Transpose", [x], f"{name}/Transpose", perm=[0, 2, 1, 3])
    return g.op("Reshape", [t, g.const(f"{name}/shape", [0, 0, hidden], np.int64)], f"{name}/Reshape")


def seq_len(g, ids, name):
    """The input's dimension 1 as a 0-d int64, as exporters get it: Shape, Gather."""
    return g.op("Gather", [g.op("Shape", [ids], f"{name}/Shape"), g.const(f"{name}/Constant", 1, np.int64)],
                f"{name}/Gather", axis=0)


def bert_tiny(vocab=8192, positions=512, hidden=256, n_heads=4, ffn=1024, layers=4, seed=20261127):
    g = Graph("bert_tiny", seed)
    head_dim = hidden // n_heads
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"])
    mask = helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch_size", "sequence_length"])

    # Embeddings: word + position + token type (all type 0, a buffer in HF's model: one row).
    word = g.op("Gather", [g.weight("embeddings.word_embeddings.weight", (vocab, hidden), 1.0), "input_ids"],
                "embeddings/word_embeddings/Gather", axis=0)
    s = seq_len(g, "input_ids", "embeddings")
    pos_ids = g.op("Range", [g.const("embeddings/start", 0, np.int64), s, g.const("embeddings/delta", 1, np.int64)],
                   "embeddings/Range")
    pos_ids = g.op("Unsqueeze", [pos_ids, g.const("embeddings/axes", [0], np.int64)], "embeddings/Unsqueeze")
    pos = g.op("Gather", [g.weight("embeddings.position_embeddings.weight", (positions, hidden), 0.5), pos_ids],
               "embeddings/position_embeddings/Gather", axis=0)
    h = g.op("Add", [word, g.weight("embeddings.token_type_embeddings.row0", (hidden,), 0.5)], "embeddings/Add")
    h = g.op("Add", [h, pos], "embeddings/Add")
    h = layer_norm(g, h, hidden, "embeddings/LayerNorm", spelled=True)

    # The extended attention mask: [b, 1, 1, s], 0 where attended, float32 min where masked.
    m = g.op("Unsqueeze", ["attention_mask", g.const("mask/axes", [1], np.int64)], "mask/Unsqueeze")
    m = g.op("Unsqueeze", [m, g.const("mask/axes", [2], np.int64)], "mask/Unsqueeze")
    m = g.op("Cast", [m], "mask/Cast", to=TensorProto.FLOAT)
    m = g.op("Sub", [g.const("mask/one", 1.0), m], "mask/Sub")
    add_mask = g.op("Mul", [m, g.const("mask/min", F32_MIN)], "mask/Mul")

    for i in range(layers):
        p = f"encoder/layer.{i}"
        q = heads(g, linear(g, h, hidden, hidden, f"{p}/attention/self/query"), n_heads, head_dim, f"{p}/attention/q")
        kt = heads(g, linear(g, h, hidden, hidden, f"{p}/attention/self/key"), n_heads, head_dim, f"{p}/attention/k",
                   perm=(0, 2, 3, 1))
        v = heads(g, linear(g, h, hidden, hidden, f"{p}/attention/self/value"), n_heads, head_dim, f"{p}/attention/v")
        scores = g.op("MatMul", [q, kt], f"{p}/attention/MatMul")
        if i % 2 == 0:
            scores = g.op("Div", [scores, g.const(f"{p}/attention/Constant", float(np.sqrt(head_dim)))], f"{p}/attention/Div")
        else:
            scores = g.op("Mul", [scores, g.const(f"{p}/attention/Constant", 1.0 / np.sqrt(head_dim))], f"{p}/attention/Mul")
        scores = g.op("Add", [scores, add_mask], f"{p}/attention/Add")
        probs = g.op("Softmax", [scores], f"{p}/attention/Softmax", axis=-1)
        ctx = merge_heads(g, g.op("MatMul", [probs, v], f"{p}/attention/MatMul"), hidden, f"{p}/attention/context")
        a = g.op("Add", [linear(g, ctx, hidden, hidden, f"{p}/attention/output/dense"), h], f"{p}/attention/output/Add")
        h = layer_norm(g, a, hidden, f"{p}/attention/output/LayerNorm", spelled=i % 2 == 1)
        f = gelu_erf(g, linear(g, h, hidden, ffn, f"{p}/intermediate/dense"), f"{p}/intermediate/gelu")
        f = g.op("Add", [linear(g, f, ffn, hidden, f"{p}/output/dense"), h], f"{p}/output/Add")
        h = layer_norm(g, f, hidden, f"{p}/output/LayerNorm", spelled=i % 2 == 1)

    g.nodes.append(helper.make_node("Identity", [h], ["last_hidden_state"], name="last_hidden_state"))
    first = g.op("Gather", [h, g.const("pooler/index", 0, np.int64)], "pooler/Gather", axis=1)
    pooled = g.op("Gemm", [first, g.weight("pooler.dense.weight", (hidden, hidden), hidden ** -0.5),
                           g.weight("pooler.dense.bias", (hidden,), 0.02)], "pooler/dense/Gemm", transB=1)
    g.nodes.append(helper.make_node("Tanh", [pooled], ["pooler_output"], name="pooler/Tanh"))
    return g.model([ids, mask], [
        helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch_size", "sequence_length", hidden]),
        helper.make_tensor_value_info("pooler_output", TensorProto.FLOAT, ["batch_size", hidden])])


def rotate_half(g, x, head_dim, name):
    half = head_dim // 2
    axes = g.const(f"{name}/axes", [-1], np.int64)
    x1 = g.op("Slice", [x, g.const(f"{name}/start", [0], np.int64), g.const(f"{name}/end", [half], np.int64), axes],
              f"{name}/Slice")
    x2 = g.op("Slice", [x, g.const(f"{name}/start", [half], np.int64),
                        g.const(f"{name}/end", [np.iinfo(np.int64).max], np.int64), axes], f"{name}/Slice")
    return g.op("Concat", [g.op("Neg", [x2], f"{name}/Neg"), x1], f"{name}/Concat", axis=-1)


def apply_rotary(g, x, cos, sin, head_dim, name):
    a = g.op("Mul", [x, cos], f"{name}/Mul")
    b = g.op("Mul", [rotate_half(g, x, head_dim, name), sin], f"{name}/Mul")
    return g.op("Add", [a, b], f"{name}/Add")


def lm_tiny(vocab=49152, hidden=256, n_heads=4, ffn=1024, layers=4, seed=20261128):
    g = Graph("lm_tiny", seed)
    head_dim = hidden // n_heads
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "sequence_length"])
    table = g.weight("model.embed_tokens.weight", (vocab, hidden), 0.25)
    h = g.op("Gather", [table, "input_ids"], "model/embed_tokens/Gather", axis=0)

    # Rotary cos/sin [1, 1, s, head_dim] from the positions 0..s-1.
    s = seq_len(g, "input_ids", "model/rotary_emb")
    pos = g.op("Range", [g.const("model/rotary_emb/start", 0, np.int64), s, g.const("model/rotary_emb/delta", 1, np.int64)],
               "model/rotary_emb/Range")
    pos = g.op("Cast", [pos], "model/rotary_emb/Cast", to=TensorProto.FLOAT)
    pos = g.op("Unsqueeze", [pos, g.const("model/rotary_emb/axes", [1], np.int64)], "model/rotary_emb/Unsqueeze")
    inv_freq = 1.0 / (10000.0 ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim))
    freqs = g.op("Mul", [pos, g.const("model/rotary_emb/inv_freq", inv_freq.reshape(1, -1))], "model/rotary_emb/Mul")
    emb = g.op("Concat", [freqs, freqs], "model/rotary_emb/Concat", axis=-1)
    axes01 = g.const("model/rotary_emb/axes", [0, 1], np.int64)
    cos = g.op("Unsqueeze", [g.op("Cos", [emb], "model/rotary_emb/Cos"), axes01], "model/rotary_emb/Unsqueeze")
    sin = g.op("Unsqueeze", [g.op("Sin", [emb], "model/rotary_emb/Sin"), axes01], "model/rotary_emb/Unsqueeze")

    # Causal mask: Trilu of ones [s, s]; as a bool condition and as an additive mask.
    ss = g.op("Concat", [g.op("Unsqueeze", [s, g.const("model/mask/axes", [0], np.int64)], "model/mask/Unsqueeze")] * 2,
              "model/mask/Concat", axis=0)
    ones = g.op("ConstantOfShape", [ss], "model/mask/ConstantOfShape",
                value=numpy_helper.from_array(np.array([1.0], np.float32)))
    tril = g.op("Trilu", [ones], "model/mask/Trilu", upper=0)
    keep = g.op("Cast", [tril], "model/mask/Cast", to=TensorProto.BOOL)
    neg = g.const("model/mask/min", F32_MIN)
    add_mask = g.op("Where", [keep, g.const("model/mask/zero", 0.0), neg], "model/mask/Where")

    for i in range(layers):
        p = f"model/layers.{i}"
        x = rms_norm(g, h, hidden, f"{p}/input_layernorm")
        q = heads(g, linear(g, x, hidden, hidden, f"{p}/self_attn/q_proj", bias=False), n_heads, head_dim, f"{p}/self_attn/q")
        k = heads(g, linear(g, x, hidden, hidden, f"{p}/self_attn/k_proj", bias=False), n_heads, head_dim, f"{p}/self_attn/k")
        v = heads(g, linear(g, x, hidden, hidden, f"{p}/self_attn/v_proj", bias=False), n_heads, head_dim, f"{p}/self_attn/v")
        q = apply_rotary(g, q, cos, sin, head_dim, f"{p}/self_attn/rotary_q")
        k = apply_rotary(g, k, cos, sin, head_dim, f"{p}/self_attn/rotary_k")
        kt = g.op("Transpose", [k], f"{p}/self_attn/Transpose", perm=[0, 1, 3, 2])
        scores = g.op("MatMul", [q, kt], f"{p}/self_attn/MatMul")
        scores = g.op("Mul", [scores, g.const(f"{p}/self_attn/scale", 1.0 / np.sqrt(head_dim))], f"{p}/self_attn/Mul")
        if i % 2 == 0:
            scores = g.op("Add", [scores, add_mask], f"{p}/self_attn/Add")
        else:
            scores = g.op("Where", [keep, scores, neg], f"{p}/self_attn/Where")
        probs = g.op("Softmax", [scores], f"{p}/self_attn/Softmax", axis=-1)
        ctx = merge_heads(g, g.op("MatMul", [probs, v], f"{p}/self_attn/MatMul"), hidden, f"{p}/self_attn/context")
        h = g.op("Add", [h, linear(g, ctx, hidden, hidden, f"{p}/self_attn/o_proj", bias=False)], f"{p}/Add")
        x = rms_norm(g, h, hidden, f"{p}/post_attention_layernorm")
        gate = linear(g, x, hidden, ffn, f"{p}/mlp/gate_proj", bias=False)
        up = linear(g, x, hidden, ffn, f"{p}/mlp/up_proj", bias=False)
        act = g.op("Mul", [gate, g.op("Sigmoid", [gate], f"{p}/mlp/act_fn/Sigmoid")], f"{p}/mlp/act_fn/Mul")
        down = linear(g, g.op("Mul", [act, up], f"{p}/mlp/Mul"), ffn, hidden, f"{p}/mlp/down_proj", bias=False)
        h = g.op("Add", [h, down], f"{p}/Add")

    x = rms_norm(g, h, hidden, "model/norm")
    head = g.op("Transpose", [table], "lm_head/Transpose", perm=[1, 0])
    g.nodes.append(helper.make_node("MatMul", [x, head], ["logits"], name="lm_head/MatMul"))
    last = g.op("Slice", ["logits", g.const("next/start", [-1], np.int64), g.const("next/end", [np.iinfo(np.int64).max], np.int64),
                          g.const("next/axes", [1], np.int64)], "next/Slice")
    g.nodes.append(helper.make_node("Softmax", [last], ["next_token_probs"], name="next/Softmax", axis=-1))
    return g.model([ids], [
        helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, "sequence_length", vocab]),
        helper.make_tensor_value_info("next_token_probs", TensorProto.FLOAT, [1, 1, vocab])])


MODELS = {"bert_tiny": bert_tiny, "lm_tiny": lm_tiny}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("--only", choices=sorted(MODELS))
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    for name, make in MODELS.items():
        if a.only and name != a.only:
            continue
        path = os.path.join(a.out_dir, name + ".onnx")
        onnx.save(make(), path + ".part")
        os.replace(path + ".part", path)
        print(f"make_transformer_models: {path} ({os.path.getsize(path) / 2**20:.1f} MiB)")


if __name__ == "__main__":
    sys.exit(main())
