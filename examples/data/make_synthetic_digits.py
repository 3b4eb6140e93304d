#!/usr/bin/python3
"""The end-to-end demo's bundled data: a synthetic 10-class image dataset ("digits" drawn as
strokes on a 28x28 grid, jittered and noisy) and an MLP 784-256-64-10 trained on it.

Run by hand with Debian's PyTorch (deterministic; rewrites the files byte for byte):
    /usr/bin/python3 examples/data/make_synthetic_digits.py

Writes, next to this script:
  synthetic_digits_test.u8   1000 test images, uint8, row-major [1000, 28, 28]
  synthetic_digits_test.labels  their 1000 labels, uint8
  mlp_784_256_64_10.onnx     the trained model (fc1, relu1, fc2, relu2, fc3), exported by
                             torch.onnx at opset 13 with a symbolic batch dimension
Inputs are the uint8 pixels divided by 255."""

import collections
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
SIDE = 28


def class_templates(rng):
    """Ten stroke patterns: each class is a few random line segments, drawn thick."""
    templates = np.zeros((10, SIDE, SIDE), dtype=np.float32)
    ys, xs = np.mgrid[0:SIDE, 0:SIDE]
    for c in range(10):
        for _ in range(3):
            (y0, x0), (y1, x1) = rng.uniform(5, 23, size=(2, 2))
            for t in np.linspace(0, 1, 40):
                cy, cx = y0 + t * (y1 - y0), x0 + t * (x1 - x0)
                templates[c] = np.maximum(templates[c], np.exp(-((ys - cy) ** 2 + (xs - cx) ** 2) / 2.0))
    return templates


def sample(templates, rng, count):
    labels = rng.integers(0, 10, size=count)
    images = np.zeros((count, SIDE, SIDE), dtype=np.float32)
    for i, c in enumerate(labels):
        dy, dx = rng.integers(-3, 4, size=2)
        img = np.roll(np.roll(templates[c], dy, axis=0), dx, axis=1)
        img = img * rng.uniform(0.6, 1.0) + rng.normal(0, 0.25, size=img.shape)
        images[i] = np.clip(img, 0, 1)
    return np.round(images * 255).astype(np.uint8), labels.astype(np.uint8)


def train(model, images, labels, epochs=4):
    """Adam, learning rate 1e-3, batches of 64, on uint8 images / 255 (make_lenet.py trains this way too)."""
    x = torch.from_numpy(images.astype(np.float32) / 255)
    y = torch.from_numpy(labels.astype(np.int64))
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        order = torch.randperm(len(x))
        for start in range(0, len(x), 64):
            batch = order[start:start + 64]
            optimiser.zero_grad()
            loss = F.cross_entropy(model(x[batch]), y[batch])
            loss.backward()
            optimiser.step()


def main():
    rng = np.random.default_rng(2026)
    torch.manual_seed(2026)
    torch.set_num_threads(1)  # reproducible sums
    templates = class_templates(rng)
    train_x, train_y = sample(templates, rng, 8000)
    test_x, test_y = sample(templates, rng, 1000)

    model = nn.Sequential(collections.OrderedDict([
        ("fc1", nn.Linear(784, 256)), ("relu1", nn.ReLU()),
        ("fc2", nn.Linear(256, 64)), ("relu2", nn.ReLU()),
        ("fc3", nn.Linear(64, 10))]))
    train(model, train_x.reshape(-1, 784), train_y)

    with torch.no_grad():
        tx = torch.from_numpy(test_x.reshape(-1, 784).astype(np.float32) / 255)
        accuracy = (model(tx).argmax(1).numpy() == test_y).mean()
    print(f"float accuracy on the test set: {accuracy:.4f}")

    test_x.tofile(os.path.join(HERE, "synthetic_digits_test.u8"))
    test_y.tofile(os.path.join(HERE, "synthetic_digits_test.labels"))
    # The batch dimension is symbolic ("batch"), as exported models usually have it: the demo
    # gives the importer the batch size it wants.
    torch.onnx.export(model, torch.zeros(1, 784), os.path.join(HERE, "mlp_784_256_64_10.onnx"),
                      input_names=["x"], output_names=["logits"], dynamic_axes={"x": {0: "batch"}},
                      opset_version=13)


if __name__ == "__main__":
    main()
