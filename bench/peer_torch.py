#!/usr/bin/env python3
"""The PyTorch peer of `autograd bench`: the same cases, in double precision on one thread.

Prints one JSON object per line: first {"peer": ...}, then one per case
{"case", "shape", "median_s", "repeats", "note"}. `autograd bench` runs this
script (with --peer auto) and prints ours/PyTorch per case.

    python3 bench/peer_torch.py [--quick] [--repeats N] [--case NAME] [--cold --evict-bytes B]
    python3 bench/peer_torch.py --serve [--quick] [--repeats N] [--cold --evict-bytes B]

--serve is how `autograd bench` runs it: one process for the whole bench, so
ours and PyTorch alternate case by case (A B A B), drift hitting both. After
the {"peer": ...} line it reads one request a line, {"case": ..., "shape":
...}, times that case and answers with its line, or {"case", "shape",
"missing": why} for a case PyTorch does not have; it exits at end of input.

Timing follows bench/harness.cpp: untimed setup (fresh leaves; with --cold
then a buffer larger than the caches written), warm-up, then the median of at
least N timed runs (more for fast cases, within a budget).
The garbage collector is off while timing, as in Python's timeit.
"""
import argparse
import gc
import gzip
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)
EPS = 1e-5
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


EVICT = {"bytes": 0, "buffer": None}  # --cold: written before every run, as bench/harness.cpp does


def evict_caches():
    if EVICT["bytes"] > 0:
        if EVICT["buffer"] is None:
            EVICT["buffer"] = torch.empty(EVICT["bytes"] // 8, dtype=torch.float64)
        EVICT["buffer"].fill_(0.0)


def measure(setup, body, repeats, quick):
    warmup, min_warmup, budget = (1, 0.0, 0.02) if quick else (2, 0.05, 0.5)
    max_repeats = 50 if EVICT["bytes"] > 0 else 2000
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        last, warm, i = 0.0, 0.0, 0
        while i < warmup or warm < min_warmup:
            setup()
            evict_caches()
            t0 = time.perf_counter()
            body()
            last = time.perf_counter() - t0
            warm += last
            i += 1
            if i > 1000:
                break
        n = repeats
        if last > 0 and budget / last > n:
            n = int(min(budget / last, max_repeats))
        times = []
        for _ in range(n):
            setup()
            evict_caches()
            t0 = time.perf_counter()
            body()
            times.append(time.perf_counter() - t0)
    finally:
        if gc_was_on:
            gc.enable()
    return statistics.median(times), n


# ---- LayerNorm and RMSNorm ---------------------------------------------------

def layernorm_composed(x, gamma, beta):
    # the seeds' module and ours (ops/layernorm.cpp): the same 8 primitives in the same order
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True, unbiased=False)
    norm = (x - mean) / torch.sqrt(var + EPS)
    return gamma * norm + beta


def layernorm_fused(x, gamma, beta):
    return F.layer_norm(x, (x.shape[1],), gamma.view(-1), beta.view(-1), EPS)


def rmsnorm_composed(x, gamma, beta):
    mean_square = torch.square(x).mean(-1, keepdim=True)
    rms = torch.sqrt(mean_square + EPS)
    return x / rms * gamma


NORMS = {
    "layernorm_fused": (layernorm_fused, ""),
    "layernorm_composed": (layernorm_composed, ""),
    # PyTorch 1.13 has no fused RMSNorm (torch.nn.RMSNorm arrived in 2.4): its composed version stands in.
    "rmsnorm_fused": (rmsnorm_composed, "PyTorch: composed (1.13 has no fused rms_norm)"),
    "rmsnorm_composed": (rmsnorm_composed, ""),
}


def norm_shapes(quick):
    shapes = [(64, 768), (4000, 768), (4096, 768), (16384, 1024)]
    return [(max(64, n // 16), d) for n, d in shapes] if quick else shapes


def run_norm(name, shape, repeats, quick):
    f, note = NORMS[name]
    n, d = shape
    g = torch.Generator().manual_seed(42)
    x0 = torch.randn(n, d, generator=g) + 0.5
    gamma0 = 1.0 + 0.1 * torch.randn(1, d, generator=g)
    beta0 = 0.1 * torch.randn(1, d, generator=g)
    dy = torch.randn(n, d, generator=g)
    leaves = {}

    def setup():
        leaves.clear()
        leaves["x"] = x0.clone().requires_grad_()
        leaves["gamma"] = gamma0.clone().requires_grad_()
        leaves["beta"] = beta0.clone().requires_grad_()

    def body():
        y = f(leaves["x"], leaves["gamma"], leaves["beta"])
        y.backward(dy)
        for k in ("x", "gamma", "beta"):
            grad = leaves[k].grad
            if grad is not None:
                float(grad[0, 0])

    median, runs = measure(setup, body, repeats, quick)
    return {"case": name, "shape": f"{n}x{d}", "median_s": median, "repeats": runs, "note": note}


# ---- per-op overhead -------------------------------------------------------

def run_overhead(repeats, quick):
    ops = 10000

    def body():
        a = torch.full((1, 1), 0.5, requires_grad=True)
        b = torch.full((1, 1), 0.9999, requires_grad=True)
        v = a
        for _ in range(ops // 2):
            v = v * b
            v = v + a
        v.backward(torch.ones(1, 1))
        float(a.grad[0, 0])
        del v  # the graph is released inside the timed run, as ours clears its tape

    median, runs = measure(lambda: None, body, repeats, quick)
    return {"case": "per_op_overhead", "shape": "10000 x 1x1", "median_s": median, "repeats": runs,
            "note": ""}


# ---- digits epoch -----------------------------------------------------------

def load_digits():
    path = os.path.join(ROOT, "data", "digits", "digits.csv.gz")
    rows = []
    with gzip.open(path, "rt") as f:
        for line in f:
            if line.strip():
                rows.append([float(v) for v in line.split(",")])
    data = torch.tensor(rows)
    return data[:, :64] / 16.0, data[:, 64].long()


def run_digits(repeats, quick):
    x, labels = load_digits()
    torch.manual_seed(7)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.LayerNorm(128, eps=EPS),
                                torch.nn.ReLU(), torch.nn.Linear(128, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    batches = torch.randperm(x.shape[0]).split(32)

    def body():
        for rows in batches:
            loss = F.cross_entropy(model(x[rows]), labels[rows])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        float(loss)

    median, runs = measure(lambda: None, body, repeats, quick)
    return {"case": "digits_epoch", "shape": "1797x64 b32", "median_s": median, "repeats": runs,
            "note": ""}


# ---- one training step of the default tiny GPT -------------------------------

WORDS = "/usr/share/dict/words"  # data/text.h's kWordsPath


def first_words(count):
    """The first `count` words made only of a-z, in the file's order, each once (data/text.h)."""
    words, seen = [], set()
    with open(WORDS, encoding="utf-8") as f:
        for line in f:
            w = line.rstrip("\r\n")
            if w and all("a" <= c <= "z" for c in w) and w not in seen:
                seen.add(w)
                words.append(w)
                if len(words) == count:
                    break
    return words


class Block(torch.nn.Module):
    """Pre-LN: x + attn(ln1(x)), then x + ffn(ln2(x)), as nn/transformer.h."""

    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = torch.nn.LayerNorm(width, eps=EPS), torch.nn.LayerNorm(width, eps=EPS)
        self.qkv, self.proj = torch.nn.Linear(width, 3 * width), torch.nn.Linear(width, width)
        self.fc, self.out = torch.nn.Linear(width, 4 * width), torch.nn.Linear(4 * width, width)

    def attend(self, x, mask):
        b, t, c = x.shape
        d = c // self.heads
        q, k, v = (z.view(b, t, self.heads, d).transpose(1, 2) for z in self.qkv(x).split(c, dim=2))
        att = ((q / d ** 0.5) @ k.transpose(-2, -1)).masked_fill(mask, float("-inf"))
        return self.proj((F.softmax(att, dim=-1) @ v).transpose(1, 2).reshape(b, t, c))

    def forward(self, x, mask):
        x = x + self.attend(self.ln1(x), mask)
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class Gpt(torch.nn.Module):
    def __init__(self, vocab=27, context=32, layers=4, width=64, heads=4):
        super().__init__()
        self.wte, self.wpe = torch.nn.Embedding(vocab, width), torch.nn.Embedding(context, width)
        self.blocks = torch.nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.ln_f, self.head = torch.nn.LayerNorm(width, eps=EPS), torch.nn.Linear(width, vocab)

    def forward(self, tokens):
        t = tokens.shape[1]
        mask = torch.ones(t, t, dtype=torch.bool).triu(1)  # padding sits after each word: causal is enough
        x = self.wte(tokens) + self.wpe(torch.arange(t))
        for block in self.blocks:
            x = block(x, mask)
        return self.head(self.ln_f(x))


def run_gpt_step(shape, repeats, quick):
    # Ours cuts each word out of the batch (nn/attention.h); PyTorch's natural form pads them
    # to one (32, T) batch and ignores the padded targets: the same loss, batched kernels.
    words = first_words(32)
    t = max(len(w) for w in words) + 1
    assert t <= 32, "a word longer than the context"
    inputs = torch.zeros(32, t, dtype=torch.long)
    targets = torch.full((32, t), -100, dtype=torch.long)
    for i, w in enumerate(words):
        ids = [ord(c) - ord("a") + 1 for c in w]
        inputs[i, :len(ids) + 1] = torch.tensor([0] + ids)
        targets[i, :len(ids) + 1] = torch.tensor(ids + [0])
    torch.manual_seed(1)
    model = Gpt()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)

    def body():
        optimizer.zero_grad()
        loss = F.cross_entropy(model(inputs).view(-1, 27), targets.view(-1), ignore_index=-100)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        float(loss)

    median, runs = measure(lambda: None, body, repeats, quick)
    return {"case": "gpt_step", "shape": shape, "median_s": median, "repeats": runs,
            "note": f"{sum(p.numel() for p in model.parameters())} parameters, padded to 32x{t}, fused LN, softmax and GELU, AdamW"}


def case_ids(quick):
    """(name, shape) of every case, in the order of the batch run."""
    ids = [(name, f"{n}x{d}") for name in NORMS for n, d in norm_shapes(quick)]
    return ids + [("per_op_overhead", "10000 x 1x1"), ("digits_epoch", "1797x64 b32"),
                  ("gpt_step", "4x64 b32"), ("gpt_step", "4x64 b32 fused")]


def run_case(name, shape, repeats, quick):
    """Times one case; None when PyTorch has no such case."""
    if (name, shape) not in case_ids(quick):
        return None
    if name in NORMS:
        n, d = (int(v) for v in shape.split("x"))
        return run_norm(name, (n, d), repeats, quick)
    if name == "per_op_overhead":
        return run_overhead(repeats, quick)
    if name == "digits_epoch":
        return run_digits(repeats, quick)
    # ours composed, then fused; PyTorch's is one model, timed under both names
    return run_gpt_step(shape, repeats, quick)


def serve(repeats, quick):
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            name, shape = str(request["case"]), str(request["shape"])
        except (ValueError, KeyError, TypeError):
            print(f"peer_torch.py: a request that is not {{\"case\": ..., \"shape\": ...}}: {line.strip()}",
                  file=sys.stderr)
            return 2
        result = run_case(name, shape, repeats, quick)
        if result is None:
            result = {"case": name, "shape": shape, "missing": "PyTorch has no such case"}
        print(json.dumps(result), flush=True)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--case", default="")
    parser.add_argument("--serve", action="store_true", help="time the cases named on stdin, one a line")
    parser.add_argument("--cold", action="store_true", help="evict the caches before every run")
    parser.add_argument("--evict-bytes", type=int, default=0, help="the buffer --cold writes")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.cold:
        if args.evict_bytes < 1:
            parser.error("--cold needs --evict-bytes")
        EVICT["bytes"] = args.evict_bytes

    print(json.dumps({"peer": f"PyTorch {torch.__version__}, {torch.get_num_threads()} thread"}), flush=True)
    if args.serve:
        return serve(args.repeats, args.quick)
    for name, shape in case_ids(args.quick):
        if not args.case or args.case in (name, f"{name}/{shape}"):
            print(json.dumps(run_case(name, shape, args.repeats, args.quick)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
