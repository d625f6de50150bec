"""
`npm run gpu-check`: what svc's torch backend does on the CUDA GPU of this machine, in one table.

1. Reference: svc's backend (the GGUF loaded by svc_torch, driven over its real protocol) gives the
   loss that transformers gives on the same file loaded its own way (`from_pretrained(gguf_file=)`).
2. Training: a LoRA run in bfloat16 on random-weight models of real shapes (Qwen3 1.7B / 4B by
   default): tokens/s, MFU (4 x parameters x tokens/s over the GPU's dense bf16 peak: a LoRA step
   runs the forward and the input gradients of every frozen weight, not their weight gradients),
   peak device memory and bytes per base parameter, against a plain transformers + PEFT loop on
   the same shape, batch and LoRA in the same run.

Needs python3 with torch (CUDA), transformers, peft and gguf. Prints the table and writes it as
JSON to --out. Weights are random: throughput and memory do not depend on their values.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BACKEND = ROOT / "engine" / "backends" / "torch" / "python"
sys.path.insert(0, str(BACKEND))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from svc_torch.protocol import read_frame, write_frame  # noqa: E402

# Qwen3's published shapes (config.json of Qwen/Qwen3-*): hidden, layers, heads, kv heads, head width, MLP width.
SHAPES = {
    "tiny": dict(hidden=64, layers=2, heads=4, kv=2, head_dim=128, ff=128, vocab=512),
    "qwen3-0.6b": dict(hidden=1024, layers=28, heads=16, kv=8, head_dim=128, ff=3072, vocab=151936),
    "qwen3-1.7b": dict(hidden=2048, layers=28, heads=16, kv=8, head_dim=128, ff=6144, vocab=151936),
    "qwen3-4b": dict(hidden=2560, layers=36, heads=32, kv=8, head_dim=128, ff=9728, vocab=151936),
}
PROJECTIONS = ["attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"]
HF_PROJECTIONS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]

# Dense (no sparsity) bf16 tensor-core peaks from the vendors' data sheets, TFLOP/s.
BF16_PEAK_TFLOPS = {
    "H100 80GB HBM3": 989.4,
    "H100 SXM": 989.4,
    "H100 PCIe": 756.0,
    "H100 NVL": 835.0,
    "H200": 989.4,
    "A100": 312.0,
    "L40S": 362.0,
    "L4": 121.0,
    "RTX 4090": 165.2,
    "A10G": 70.0,
}


def peak_tflops(name: str):
    return next((v for k, v in BF16_PEAK_TFLOPS.items() if k in name), None)


def write_random_gguf(path: str, s: dict, seed: int) -> int:
    """A Qwen3 GGUF with random float16 weights (tied embeddings, as the small Qwen3s ship)."""
    import gguf

    gen = torch.Generator(device="cuda" if torch.cuda.is_available() else "cpu").manual_seed(seed)

    def rand(*shape, std=0.02):
        return (torch.randn(*shape, generator=gen, device=gen.device, dtype=torch.float32) * std).half().cpu().numpy()

    def ones(n):
        return (1.0 + 0.1 * torch.randn(n, generator=gen, device=gen.device)).float().cpu().numpy()

    h, hd, ff = s["hidden"], s["head_dim"], s["ff"]
    w = gguf.GGUFWriter(path, "qwen3")
    w.add_context_length(40960)
    w.add_embedding_length(h)
    w.add_block_count(s["layers"])
    w.add_feed_forward_length(ff)
    w.add_head_count(s["heads"])
    w.add_head_count_kv(s["kv"])
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_rope_freq_base(1_000_000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_vocab_size(s["vocab"])
    w.add_tokenizer_model("gpt2")
    w.add_token_list([f"t{i}" for i in range(s["vocab"])])
    w.add_token_types([1] * s["vocab"])
    params = 0

    def add(name, array):
        nonlocal params
        params += array.size
        w.add_tensor(name, array)

    add("token_embd.weight", rand(s["vocab"], h))
    for i in range(s["layers"]):
        add(f"blk.{i}.attn_norm.weight", ones(h))
        add(f"blk.{i}.attn_q.weight", rand(s["heads"] * hd, h))
        add(f"blk.{i}.attn_k.weight", rand(s["kv"] * hd, h))
        add(f"blk.{i}.attn_v.weight", rand(s["kv"] * hd, h))
        add(f"blk.{i}.attn_output.weight", rand(h, s["heads"] * hd))
        add(f"blk.{i}.attn_q_norm.weight", ones(hd))
        add(f"blk.{i}.attn_k_norm.weight", ones(hd))
        add(f"blk.{i}.ffn_norm.weight", ones(h))
        add(f"blk.{i}.ffn_gate.weight", rand(ff, h))
        add(f"blk.{i}.ffn_up.weight", rand(ff, h))
        add(f"blk.{i}.ffn_down.weight", rand(h, ff))
    add("output_norm.weight", ones(h))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return params


class Backend:
    """svc's torch backend process, spoken to over its protocol as the TypeScript client does."""

    def __init__(self, device: str):
        env = {**os.environ, "SVC_TORCH_DEVICE": device, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen([sys.executable, str(BACKEND / "svc_torch_server.py")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.next_id = 0

    def call(self, op: str, tensors=None, **fields):
        self.next_id += 1
        write_frame(self.proc.stdin, {"id": self.next_id, "op": op, **fields}, tensors)
        while True:
            frame = read_frame(self.proc.stdout)
            if frame is None:
                raise RuntimeError(f"svc_torch exited during {op}")
            header, out = frame
            if "progress" in header:
                continue
            if not header.get("ok"):
                raise RuntimeError(f"{op}: {header.get('error')}")
            return header, out

    def close(self):
        try:
            self.call("shutdown")
        except Exception:
            pass
        self.proc.wait(timeout=60)


def batch(vocab: int, b: int, t: int, seed: int):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, vocab, size=(b, t + 1), dtype=np.int64)
    mask = np.ones((b, t), dtype=np.float32)
    return ids[:, :-1].astype(np.int32), ids[:, 1:].astype(np.int32), mask


def lora_init(shapes: dict, r: int, seed: int):
    rng = np.random.default_rng(seed)
    tensors = {}
    for name, (out_dim, in_dim) in shapes.items():
        tensors[f"{name}.weight.lora_a"] = (rng.standard_normal((r, in_dim)) / np.sqrt(in_dim)).astype(np.float32)
        tensors[f"{name}.weight.lora_b"] = np.zeros((out_dim, r), dtype=np.float32)
    return tensors


OPTIMIZER = {"learningRate": 1e-4, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8, "weightDecay": 0.0, "maxGradNorm": 1.0}


def svc_run(path: str, s: dict, args, device: str, checkpoint):
    backend = Backend(device)
    try:
        hello, _ = backend.call("hello")
        started = time.perf_counter()
        loaded, _ = backend.call("load", modelPath=path, config={"contextLength": 40960}, device=device, dtype=args.dtype, checkpointActivations=checkpoint)
        load_seconds = time.perf_counter() - started
        backend.call("init_lora", lora_init(loaded["projectionShapes"], args.rank, 1), spec={"r": args.rank, "alpha": 2 * args.rank, "targets": PROJECTIONS})
        inputs, targets, mask = batch(s["vocab"], args.batch, args.length, 2)
        tensors = {"inputs": inputs, "targets": targets, "mask": mask}
        evaluated, _ = backend.call("eval", tensors, batchSize=args.batch, length=args.length)
        losses, times = [], []
        for _ in range(args.warmup + args.steps):
            started = time.perf_counter()
            reply, _ = backend.call("train_step", tensors, batchSize=args.batch, length=args.length, optimizer=OPTIMIZER)
            times.append(time.perf_counter() - started)
            losses.append(reply["loss"])
        memory, _ = backend.call("memory")
        step_seconds = float(np.median(times[args.warmup :]))
        return {
            "device": hello["device"],
            "torch": hello["torch"],
            "transformers": hello["transformers"],
            "peft": hello["peft"],
            "parameters": loaded["parameters"],
            "loadSeconds": load_seconds,
            "stepSeconds": step_seconds,
            "tokensPerSecond": args.batch * args.length / step_seconds,
            "peakDeviceBytes": memory["peakDeviceBytes"],
            "firstLoss": evaluated["lossSum"] / evaluated["maskedTokens"],
            "losses": losses,
        }
    finally:
        backend.close()


def hf_config(s: dict):
    from transformers import Qwen3Config

    return Qwen3Config(
        vocab_size=s["vocab"],
        hidden_size=s["hidden"],
        intermediate_size=s["ff"],
        num_hidden_layers=s["layers"],
        num_attention_heads=s["heads"],
        num_key_value_heads=s["kv"],
        head_dim=s["head_dim"],
        max_position_embeddings=40960,
        rope_theta=1_000_000.0,
        rms_norm_eps=1e-6,
        tie_word_embeddings=True,
    )


def plain_run(s: dict, args, device: str, checkpoint: bool):
    """The loop a user would write: transformers model, PEFT LoRA, AdamW, model(..., labels=...)."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    dtype = getattr(torch, args.dtype)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(hf_config(s), dtype=dtype, attn_implementation="sdpa")
    if checkpoint:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.enable_input_require_grads()
    model = get_peft_model(model, LoraConfig(r=args.rank, lora_alpha=2 * args.rank, lora_dropout=0.0, target_modules=HF_PROJECTIONS))
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=1e-4, eps=1e-8, weight_decay=0.0)
    inputs, targets, _ = batch(s["vocab"], args.batch, args.length, 2)
    ids = torch.from_numpy(np.concatenate([inputs, targets[:, -1:]], axis=1).astype(np.int64)).to(device)
    times = []
    for _ in range(args.warmup + args.steps):
        if cuda:
            torch.cuda.synchronize()
        started = time.perf_counter()
        loss = model(input_ids=ids, labels=ids).loss  # transformers shifts the labels itself
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        loss.item()
        times.append(time.perf_counter() - started)
    step_seconds = float(np.median(times[args.warmup :]))
    parameters = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    result = {
        "stepSeconds": step_seconds,
        "tokensPerSecond": args.batch * args.length / step_seconds,
        "peakDeviceBytes": torch.cuda.max_memory_allocated() if cuda else 0,
        "parameters": parameters,
    }
    del model, optimizer
    if cuda:
        torch.cuda.empty_cache()
    return result


def reference(path: str, s: dict, args, device: str):
    """svc's loss on the GGUF against transformers' own GGUF loading of the same file."""
    from transformers import AutoModelForCausalLM

    backend = Backend(device)
    try:
        loaded, _ = backend.call("load", modelPath=path, config={"contextLength": 40960}, device=device, dtype="float32")
        backend.call("init_lora", lora_init(loaded["projectionShapes"], 4, 1), spec={"r": 4, "alpha": 8, "targets": PROJECTIONS})
        inputs, targets, mask = batch(s["vocab"], 2, 128, 3)
        evaluated, _ = backend.call("eval", {"inputs": inputs, "targets": targets, "mask": mask}, batchSize=2, length=128)
        svc_loss = evaluated["lossSum"] / evaluated["maskedTokens"]
    finally:
        backend.close()
    folder, name = os.path.split(path)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32).to(device)
    with torch.no_grad():
        logits = model(input_ids=torch.from_numpy(inputs.astype(np.int64)).to(device)).logits.float()
        hf_loss = float(torch.nn.functional.cross_entropy(logits.flatten(0, 1), torch.from_numpy(targets.astype(np.int64)).to(device).flatten()))
    del model
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return {"svcLoss": svc_loss, "transformersLoss": hf_loss, "difference": abs(svc_loss - hf_loss)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", default="qwen3-1.7b,qwen3-4b")
    parser.add_argument("--reference-shape", default="qwen3-0.6b")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--length", type=int, default=2048)
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    device = args.device
    if device.startswith("cuda") and not torch.cuda.is_available():
        print("gpu-check: torch sees no CUDA device here; nothing to check.", file=sys.stderr)
        return 2
    gpu = torch.cuda.get_device_name(0) if device.startswith("cuda") else "cpu"
    peak = peak_tflops(gpu)
    report = {"gpu": gpu, "peakBf16Tflops": peak, "batch": [args.batch, args.length], "rank": args.rank, "runs": []}
    workdir = tempfile.mkdtemp(prefix="svc-gpu-check-")
    started = time.perf_counter()
    if args.reference_shape:
        path = os.path.join(workdir, f"{args.reference_shape}.gguf")
        write_random_gguf(path, SHAPES[args.reference_shape], 7)
        try:
            report["reference"] = {"shape": args.reference_shape, **reference(path, SHAPES[args.reference_shape], args, device)}
        except Exception as err:  # the table still shows the training runs
            report["referenceError"] = f"{type(err).__name__}: {err}"
            print(f"reference failed: {report['referenceError']}", flush=True)
        os.remove(path)
    if "reference" in report:
        print(
            f"reference ({args.reference_shape}, float32): svc {report['reference']['svcLoss']:.6f}  transformers "
            f"{report['reference']['transformersLoss']:.6f}  |diff| {report['reference']['difference']:.2e}",
            flush=True,
        )
    for name in [n for n in args.shapes.split(",") if n]:
        s = SHAPES[name]
        path = os.path.join(workdir, f"{name}.gguf")
        write_random_gguf(path, s, 11)
        checkpoint = name == "qwen3-4b"
        try:
            svc = svc_run(path, s, args, device, checkpoint)
            plain = plain_run(s, args, device, checkpoint)
        except Exception as err:
            report["runs"].append({"shape": name, "error": f"{type(err).__name__}: {err}"})
            print(f"{name} failed: {type(err).__name__}: {err}", flush=True)
            continue
        finally:
            os.remove(path)
        run = {
            "shape": name,
            "checkpointing": checkpoint,
            "svc": svc,
            "plain": plain,
            "ratio": svc["tokensPerSecond"] / plain["tokensPerSecond"],
            "mfu": (4 * svc["parameters"] * svc["tokensPerSecond"] / (peak * 1e12)) if peak else None,
            "plainMfu": (4 * plain["parameters"] * plain["tokensPerSecond"] / (peak * 1e12)) if peak else None,
            "bytesPerParameter": svc["peakDeviceBytes"] / svc["parameters"] if svc["peakDeviceBytes"] else None,
        }
        report["runs"].append(run)
        print(json.dumps({k: v for k, v in run.items() if k not in ("svc", "plain")}), flush=True)
        if args.out:  # after each run, so a run cut short still leaves what it measured
            Path(args.out).write_text(json.dumps(report, indent=2))
    report["seconds"] = time.perf_counter() - started
    print_table(report)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2))
    return 0


def print_table(report: dict) -> None:
    print(
        f"\nsvc gpu-check on {report['gpu']} (dense bf16 peak {report['peakBf16Tflops']} TFLOP/s), "
        f"batch {report['batch'][0]}x{report['batch'][1]}, LoRA r={report['rank']} on all projections"
    )
    if "reference" in report:
        ref = report["reference"]
        print(f"reference {ref['shape']}: svc loss {ref['svcLoss']:.6f}, transformers {ref['transformersLoss']:.6f}, |diff| {ref['difference']:.1e}")
    print("| shape | params | ckpt | svc tok/s | plain tok/s | svc/plain | svc MFU | plain MFU | svc peak GiB | bytes/param |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for run in report["runs"]:
        if "error" in run:
            print(f"| {run['shape']} | failed: {run['error'][:120]} |")
            continue
        svc, plain = run["svc"], run["plain"]
        mfu = lambda v: f"{100 * v:.1f}%" if v is not None else "n/a"  # noqa: E731
        print(
            f"| {run['shape']} | {svc['parameters'] / 1e9:.2f}B | {'on' if run['checkpointing'] else 'off'} | "
            f"{svc['tokensPerSecond']:.0f} | {plain['tokensPerSecond']:.0f} | {run['ratio']:.2f}x | {mfu(run['mfu'])} | "
            f"{mfu(run['plainMfu'])} | {svc['peakDeviceBytes'] / 2**30:.1f} | {run['bytesPerParameter'] or 0:.2f} |"
        )


if __name__ == "__main__":
    sys.exit(main())
