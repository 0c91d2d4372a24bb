#!/usr/bin/env python3
"""The PyTorch peer of tests/test_gpt.cpp: one transformer block, written with
torch's own ops from the same weights, in double precision on one thread.

    python3 tests/peer_gpt_block.py IN OUT

IN holds "config PLACEMENT NORM HEADS LENGTHS" (LENGTHS comma-separated), then
matrices, each "NAME ROWS COLS" and ROWS lines of values: x, dout and every
parameter of the block named "blk". OUT gets the matrix "y", "loss" (1x1,
sum(y * dout)) and the gradient of the loss for x and every parameter, named
"grad:NAME", in the same format. The math is the block of nn/transformer.h:
post-LN x = norm1(x + attn(x)), pre-LN x = x + attn(norm1(x)), or no norm.
"""
import math
import sys

import torch
import torch.nn.functional as F

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)
EPS = 1e-5


def read(path):
    with open(path) as f:
        lines = f.read().split("\n")
    config = lines[0].split()
    mats, i = {}, 1
    while i < len(lines) and lines[i].strip():
        name, rows, cols = lines[i].split()
        rows, cols = int(rows), int(cols)
        values = [[float(v) for v in lines[i + 1 + r].split()] for r in range(rows)]
        mats[name] = torch.tensor(values).reshape(rows, cols)
        i += 1 + rows
    return config, mats


def write(path, mats):
    with open(path, "w") as f:
        for name, m in mats.items():
            m = m.detach().reshape(m.shape[0], -1)
            f.write("%s %d %d\n" % (name, m.shape[0], m.shape[1]))
            for row in m.tolist():
                f.write(" ".join("%.17g" % v for v in row) + "\n")


def norm(x, p, name, kind):
    if kind == "layernorm":
        return F.layer_norm(x, (x.shape[1],), p[name + ".gamma"].view(-1), p[name + ".beta"].view(-1), EPS)
    # torch 1.13 has no rms_norm: the formula of ops/layernorm.h
    return x / torch.sqrt((x * x).mean(dim=1, keepdim=True) + EPS) * p[name + ".gamma"]


def attention(x, p, heads, lengths):
    width = x.shape[1]
    d = width // heads
    qkv = x @ p["blk.attn.qkv.weight"] + p["blk.attn.qkv.bias"]
    q, k, v = qkv[:, :width], qkv[:, width:2 * width], qkv[:, 2 * width:]
    sequences, first = [], 0
    for n in lengths:
        mask = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
        outs = []
        for h in range(heads):
            cols = slice(h * d, (h + 1) * d)
            rows = slice(first, first + n)
            scores = q[rows, cols] @ k[rows, cols].T / math.sqrt(d)
            outs.append(torch.softmax(scores.masked_fill(mask, float("-inf")), dim=1) @ v[rows, cols])
        sequences.append(torch.cat(outs, dim=1))
        first += n
    return torch.cat(sequences, dim=0) @ p["blk.attn.proj.weight"] + p["blk.attn.proj.bias"]


def ffn(x, p):
    h = F.gelu(x @ p["blk.ffn.fc.weight"] + p["blk.ffn.fc.bias"], approximate="tanh")
    return h @ p["blk.ffn.proj.weight"] + p["blk.ffn.proj.bias"]


def block(x, p, placement, kind, heads, lengths):
    if placement == "pre":
        x = x + attention(norm(x, p, "blk.norm1", kind), p, heads, lengths)
        return x + ffn(norm(x, p, "blk.norm2", kind), p)
    if placement == "post":
        x = norm(x + attention(x, p, heads, lengths), p, "blk.norm1", kind)
        return norm(x + ffn(x, p), p, "blk.norm2", kind)
    x = x + attention(x, p, heads, lengths)
    return x + ffn(x, p)


def main():
    config, mats = read(sys.argv[1])
    _, placement, kind, heads, lengths = config
    lengths = [int(n) for n in lengths.split(",")]
    dout = mats.pop("dout")
    leaves = {name: m.clone().requires_grad_(True) for name, m in mats.items()}
    y = block(leaves["x"], leaves, placement, kind, int(heads), lengths)
    loss = (y * dout).sum()
    loss.backward()
    out = {"y": y, "loss": loss.reshape(1, 1)}
    for name, leaf in leaves.items():
        out["grad:" + name] = leaf.grad
    write(sys.argv[2], out)


if __name__ == "__main__":
    main()
