#!/usr/bin/env python3
"""The model of examples/custom_op.cpp: an ONNX graph with a node of a custom domain.

    x [4, 8] -> Gemm (fc1, 8 -> 16) -> com.example.HardShrink (lambd = 0.25) -> Gemm (fc2, 16 -> 4) -> y

Writes examples/data/custom_op.onnx (ONNX has no HardShrink of its own before opset 9's Shrink,
and a user's exporter would write a node of its own domain like this one), custom_op_x.npy (a
seeded input) and custom_op_y.npy: PyTorch's output for it, from nn.Linear, nn.Hardshrink and
nn.Linear holding the same weights.

Run by hand with the interpreter that has torch 1.13 and onnx:

    /usr/bin/python3 examples/data/make_custom_op_model.py
"""

import pathlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
import torch
import torch.nn as nn

HERE = pathlib.Path(__file__).resolve().parent
torch.manual_seed(14)
torch.set_num_threads(1)

model = nn.Sequential(nn.Linear(8, 16), nn.Hardshrink(lambd=0.25), nn.Linear(16, 4)).eval()
x = torch.randn(4, 8)
with torch.no_grad():
    y = model(x)


def initializer(name, tensor):
    return numpy_helper.from_array(tensor.detach().numpy().astype(np.float32), name)


fc1, fc2 = model[0], model[2]
graph = helper.make_graph(
    [
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"], name="/fc1/Gemm", transB=1),
        helper.make_node("HardShrink", ["h"], ["s"], name="/shrink/HardShrink", domain="com.example", lambd=0.25),
        helper.make_node("Gemm", ["s", "fc2.weight", "fc2.bias"], ["y"], name="/fc2/Gemm", transB=1),
    ],
    "custom_op",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])],
    [initializer("fc1.weight", fc1.weight), initializer("fc1.bias", fc1.bias),
     initializer("fc2.weight", fc2.weight), initializer("fc2.bias", fc2.bias)],
)
onnx_model = helper.make_model(
    graph, producer_name="make_custom_op_model.py",
    opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)])
onnx_model.ir_version = 8
onnx.save(onnx_model, HERE / "custom_op.onnx")
np.save(HERE / "custom_op_x.npy", x.numpy().astype(np.float32))
np.save(HERE / "custom_op_y.npy", y.numpy().astype(np.float32))
print("wrote custom_op.onnx, custom_op_x.npy, custom_op_y.npy; shrunk to zero:",
      int((model[1](model[0](x)) == 0).sum()), "of", 4 * 16)
