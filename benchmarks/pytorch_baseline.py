#!/usr/bin/python3
"""PyTorch eager baseline for bench_inference: the same architectures as
benchmarks/reference_models.hpp, one thread, inference (no_grad), float32.

Run with Debian's PyTorch: /usr/bin/python3 benchmarks/pytorch_baseline.py [name ...]
(names: mlp, lenet5, encoder, resnet18; none: all). Prints the median time of each model's
forward pass in milliseconds."""

import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

torch.set_num_threads(1)
torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(784, 256), nn.Linear(256, 64), nn.Linear(64, 10)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 6, 5, padding=2), nn.Conv2d(6, 16, 5)
        self.fc1, self.fc2, self.fc3 = nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class EncoderLayer(nn.Module):
    """Post-norm BERT layer with attention written from primitives (torch 1.13 has no
    F.scaled_dot_product_attention), as mase's graph computes it."""

    def __init__(self, hidden=128, heads=2, ffn=512):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.q, self.k, self.v, self.o = (nn.Linear(hidden, hidden) for _ in range(4))
        self.norm1, self.norm2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.up, self.down = nn.Linear(hidden, ffn), nn.Linear(ffn, hidden)

    def forward(self, x):
        b, s, h = x.shape
        split = lambda t: t.reshape(b, s, self.heads, self.head_dim).permute(0, 2, 1, 3)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        weights = torch.softmax(q @ k.transpose(-2, -1) / self.head_dim**0.5, dim=-1)
        a = (weights @ v).permute(0, 2, 1, 3).reshape(b, s, h)
        x = self.norm1(self.o(a) + x)
        return self.norm2(self.down(F.gelu(self.up(x))) + x)


def median_ms(model, x, repeats=200):
    with torch.no_grad():
        for _ in range(20):
            model(x)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            model(x)
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


if __name__ == "__main__":
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}")
    models = {
        "mlp": ("mlp_784_256_64_10 batch 64", MLP, (64, 784)),
        "lenet5": ("lenet5 batch 64", LeNet5, (64, 1, 28, 28)),
        "encoder": ("encoder h128 2 heads 2 layers seq 32 batch 8",
                    lambda: nn.Sequential(EncoderLayer(), EncoderLayer()), (8, 32, 128)),
        "resnet18": ("torchvision resnet18 224x224 batch 1", torchvision.models.resnet18, (1, 3, 224, 224)),
    }
    for key in sys.argv[1:] or models:
        name, make, input_shape = models[key]
        print(f"{name}: {median_ms(make().eval(), torch.randn(*input_shape)):.3f} ms")
