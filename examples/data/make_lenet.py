#!/usr/bin/python3
"""A LeNet-5 trained on the end-to-end demo's synthetic digits (make_synthetic_digits.py draws the
same images from the same seed), for the mixed-precision search's second model.

Run by hand with Debian's PyTorch (deterministic):
    /usr/bin/python3 examples/data/make_lenet.py

Writes lenet5.onnx next to this script: conv1 (1->6, 5x5, pad 2), relu1, pool1 (max 2x2),
conv2 (6->16, 5x5), relu2, pool2, flatten, fc1 (400->120), relu3, fc2 (120->84), relu4,
fc3 (84->10); input "x" [batch, 1, 28, 28] (uint8 pixels / 255), output "logits", opset 13,
symbolic batch. The test images are synthetic_digits_test.u8."""

import collections
import os

import numpy as np
import torch
import torch.nn as nn

import make_synthetic_digits as digits

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    rng = np.random.default_rng(2026)  # as make_synthetic_digits.main: the same images, in order
    torch.manual_seed(2026)
    torch.set_num_threads(1)
    templates = digits.class_templates(rng)
    train_x, train_y = digits.sample(templates, rng, 8000)
    test_x, test_y = digits.sample(templates, rng, 1000)
    stored = np.fromfile(os.path.join(HERE, "synthetic_digits_test.u8"), dtype=np.uint8).reshape(test_x.shape)
    assert np.array_equal(stored, test_x), "the test images differ from synthetic_digits_test.u8"

    model = nn.Sequential(collections.OrderedDict([
        ("conv1", nn.Conv2d(1, 6, 5, padding=2)), ("relu1", nn.ReLU()), ("pool1", nn.MaxPool2d(2)),
        ("conv2", nn.Conv2d(6, 16, 5)), ("relu2", nn.ReLU()), ("pool2", nn.MaxPool2d(2)),
        ("flatten", nn.Flatten()),
        ("fc1", nn.Linear(400, 120)), ("relu3", nn.ReLU()),
        ("fc2", nn.Linear(120, 84)), ("relu4", nn.ReLU()),
        ("fc3", nn.Linear(84, 10))]))
    digits.train(model, train_x.reshape(-1, 1, 28, 28), train_y)

    model.eval()
    with torch.no_grad():
        tx = torch.from_numpy(test_x.reshape(-1, 1, 28, 28).astype(np.float32) / 255)
        accuracy = (model(tx).argmax(1).numpy() == test_y).mean()
    print(f"float accuracy on the test set: {accuracy:.4f}")
    torch.onnx.export(model, torch.zeros(1, 1, 28, 28), os.path.join(HERE, "lenet5.onnx"),
                      input_names=["x"], output_names=["logits"], dynamic_axes={"x": {0: "batch"}},
                      opset_version=13)


if __name__ == "__main__":
    main()
