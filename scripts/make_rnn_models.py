#!/usr/bin/env python3
"""Recurrent layers as exporters write them (seeded random weights), for scripts/bench_rnn.sh:
a CRNN-sized bidirectional LSTM (80 steps, 256 units), a forward GRU and a forward RNN of the
same size, each one ONNX op of opset 14 with its biases and no initial state.

Usage: make_rnn_models.py OUT_DIR"""
import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

STEPS, BATCH, INPUT, HIDDEN = 80, 1, 256, 256


def model(kind, direction, rng):
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[kind]
    dirs = 2 if direction == "bidirectional" else 1
    weights = [numpy_helper.from_array((rng.standard_normal(s) * 0.05).astype(np.float32), n)
               for n, s in (("W", (dirs, gates * HIDDEN, INPUT)), ("R", (dirs, gates * HIDDEN, HIDDEN)),
                            ("B", (dirs, 2 * gates * HIDDEN)))]
    outputs = ["Y", "Y_h"] + (["Y_c"] if kind == "LSTM" else [])
    node = helper.make_node(kind, ["X", "W", "R", "B"], outputs, hidden_size=HIDDEN, direction=direction)
    graph = helper.make_graph(
        [node], f"{kind.lower()}_{direction}",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [STEPS, BATCH, INPUT])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [STEPS, dirs, BATCH, HIDDEN])] +
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, [dirs, BATCH, HIDDEN]) for o in outputs[1:]], weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(20261129)
    for name, kind, direction in (("lstm_bidirectional", "LSTM", "bidirectional"), ("gru_forward", "GRU", "forward"),
                                  ("rnn_forward", "RNN", "forward")):
        save(model(kind, direction, rng), out / f"{name}.onnx")
        print(out / f"{name}.onnx")


if __name__ == "__main__":
    main()
