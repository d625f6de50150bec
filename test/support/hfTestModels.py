"""
Random-weight Hugging Face models of real Gemma architectures, for tests (see hfTestModels.ts).

  build    --arch gemma3|gemma4 --vocab-gguf V --out DIR [--dtype float32|bfloat16] [--seed N]
           writes DIR as transformers writes a model (config.json, generation_config.json,
           model.safetensors, tokenizer.json, tokenizer_config.json; gemma3 also tokenizer.model)
  logits   --model DIR [--gguf FILE] --tokens 1,2,3
           prints JSON {"logits": [...]} : transformers' float32 next-token logits after the tokens,
           from the HF folder, or from FILE through transformers' own GGUF loader
           (AutoModelForCausalLM.from_pretrained(dir, gguf_file=...)) when --gguf is given;
           --complete-config first completes transformers' config from the file's llama.cpp keys

Run with the svc torch venv's python; nothing here downloads.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import sys

import numpy as np

# --- tokenizer -------------------------------------------------------------------------------


def read_vocab(vocab_gguf: str) -> dict:
    from gguf import GGUFReader

    reader = GGUFReader(vocab_gguf)
    fields = reader.fields

    def get(key, default=None):
        return fields[key].contents() if key in fields else default

    return {
        "tokens": get("tokenizer.ggml.tokens"),
        "types": get("tokenizer.ggml.token_type"),
        "merges": get("tokenizer.ggml.merges", []),
        "bos": get("tokenizer.ggml.bos_token_id"),
        "eos": get("tokenizer.ggml.eos_token_id"),
        "unk": get("tokenizer.ggml.unknown_token_id"),
        "pad": get("tokenizer.ggml.padding_token_id"),
        "chat_template": get("tokenizer.chat_template"),
    }


CONTROL, USER_DEFINED = 3, 4


def write_tokenizer_json(vocab: dict, out: str) -> None:
    """Gemma's tokenizer.json (a byte-fallback BPE over '▁'-escaped text), from llama.cpp's vocabulary."""
    tokens, types = vocab["tokens"], vocab["types"]
    added = [
        {"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": types[i] == CONTROL}
        for i, t in enumerate(tokens)
        if types[i] in (CONTROL, USER_DEFINED)
    ]
    bos = tokens[vocab["bos"]]
    data = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
        "pre_tokenizer": None,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [
                {"SpecialToken": {"id": bos, "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": bos, "type_id": 1}},
                {"Sequence": {"id": "B", "type_id": 1}},
            ],
            "special_tokens": {bos: {"id": bos, "ids": [vocab["bos"]], "tokens": [bos]}},
        },
        "decoder": {
            "type": "Sequence",
            "decoders": [
                {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
                {"type": "ByteFallback"},
                {"type": "Fuse"},
            ],
        },
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": tokens[vocab["unk"]],
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": True,
            "byte_fallback": True,
            "ignore_merges": False,
            "vocab": {t: i for i, t in enumerate(tokens)},
            "merges": [m.split(" ", 1) for m in vocab["merges"]],
        },
    }
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False)
    config = {
        "tokenizer_class": "GemmaTokenizer",
        "bos_token": bos,
        "eos_token": tokens[vocab["eos"]],
        "unk_token": tokens[vocab["unk"]],
        "pad_token": tokens[vocab["pad"]],
        "add_bos_token": True,
        "add_eos_token": False,
        "model_max_length": 1_000_000,
    }
    if vocab["chat_template"]:
        config["chat_template"] = vocab["chat_template"]
    with open(os.path.join(out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, ensure_ascii=False)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def write_sentencepiece_model(vocab: dict, out: str) -> None:
    """
    tokenizer.model (sentencepiece's ModelProto, encoded by hand: the venv has no protobuf) with
    the vocabulary's pieces. Real Gemma 3 repositories ship one, and convert_hf_to_gguf.py reads
    the vocabulary from it (Gemma3Model.set_vocab); without it the converter falls back to its GPT-2
    BPE path, which refuses a tokenizer.json whose pre-tokenizer hash it does not know.
    Types follow sentencepiece's enum (1 normal, 2 unknown, 3 control, 4 user defined, 6 byte),
    which gguf's token types share; sentencepiece needs exactly one unknown piece.
    Scores rank normal pieces by id (earlier merges first), as sentencepiece BPE models do.
    """
    pieces = bytearray()
    for i, (token, kind) in enumerate(zip(vocab["tokens"], vocab["types"], strict=True)):
        kind = 2 if i == vocab["unk"] else int(kind)
        score = -float(i) if kind == 1 else 0.0
        piece = _field(1, token.encode("utf-8")) + b"\x15" + struct.pack("<f", score) + b"\x18" + _varint(kind)
        pieces += _field(1, piece)
    trainer = (
        b"\x18"
        + _varint(2)  # model_type BPE
        + b"\x20"
        + _varint(len(vocab["tokens"]))  # vocab_size
        + _varint(35 << 3)
        + _varint(1)  # byte_fallback
        + _varint(40 << 3)
        + _varint(vocab["unk"])  # unk_id
        + _varint(41 << 3)
        + _varint(vocab["bos"])  # bos_id
        + _varint(42 << 3)
        + _varint(vocab["eos"])  # eos_id
        + _varint(43 << 3)
        + _varint(vocab["pad"])
    )  # pad_id
    normalizer = (
        _field(1, b"identity")
        + b"\x18"
        + _varint(0)  # add_dummy_prefix
        + b"\x20"
        + _varint(0)  # remove_extra_whitespaces
        + b"\x28"
        + _varint(1)
    )  # escape_whitespaces
    with open(os.path.join(out, "tokenizer.model"), "wb") as f:
        f.write(bytes(pieces) + _field(2, trainer) + _field(3, normalizer))


# --- model -----------------------------------------------------------------------------------


def gemma3_config(vocab: dict):
    from transformers import Gemma3TextConfig

    # Gemma 3 270M's shape, shrunk: five sliding layers then a global one (llama.cpp assumes this
    # 5:1 pattern for gemma3, its files carry none), grouped-query attention,
    # query_pre_attn_scalar = head_dim as in the 270M / 1B configs.
    return Gemma3TextConfig(
        vocab_size=len(vocab["tokens"]),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=6,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=32,
        query_pre_attn_scalar=32,
        max_position_embeddings=256,
        sliding_window=8,
        layer_types=["sliding_attention"] * 5 + ["full_attention"],
        rope_parameters={
            "sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0},
            "full_attention": {"rope_type": "default", "rope_theta": 1_000_000.0},
        },
        bos_token_id=vocab["bos"],
        eos_token_id=vocab["eos"],
        pad_token_id=vocab["pad"],
        tie_word_embeddings=True,
        architectures=["Gemma3ForCausalLM"],
    )


def gemma4_config(vocab: dict):
    from transformers import Gemma4TextConfig

    # Gemma 4 E2B's text part, shrunk: per-layer embeddings, the last layers reusing earlier
    # layers' KV (num_kv_shared_layers), double-wide MLP on those, wider heads on global layers
    # (global_head_dim) with proportional partial RoPE, final logit softcapping.
    return Gemma4TextConfig(
        vocab_size=len(vocab["tokens"]),
        vocab_size_per_layer_input=len(vocab["tokens"]),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=4,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=32,
        global_head_dim=64,
        hidden_size_per_layer_input=16,
        num_kv_shared_layers=2,
        use_double_wide_mlp=True,
        layer_types=["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
        sliding_window=8,
        final_logit_softcapping=30.0,
        max_position_embeddings=256,
        rope_parameters={
            "sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0},
            "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1_000_000.0},
        },
        bos_token_id=vocab["bos"],
        eos_token_id=vocab["eos"],
        pad_token_id=vocab["pad"],
        tie_word_embeddings=True,
        architectures=["Gemma4ForCausalLM"],
    )


def randomize(model, seed: int) -> None:
    """
    Weights that make next-token distributions peaked (so comparisons are not won by near-uniform
    logits): linear layers N(0, 1/in), embeddings N(0, 1), every 1-D parameter its initial value
    plus N(0, 0.1^2) (Gemma 3 norms store w in x * (1 + w), Gemma 4's store the factor itself).
    """
    import torch

    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        # Gemma 4's per-layer output scale is a buffer that save_pretrained writes; the real
        # checkpoints hold values well away from its initial 1.0, so a loader that skips it shows.
        for name, b in model.named_buffers():
            if name.endswith("layer_scalar"):
                b.copy_((0.5 + torch.rand(b.shape, generator=generator)).to(b.dtype))
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=generator, dtype=torch.float32)
            if p.dim() == 1:
                p.add_((0.1 * noise).to(p.dtype))
            elif "embed" in name:
                p.copy_(noise.to(p.dtype))
            else:
                p.copy_((noise / p.shape[-1] ** 0.5).to(p.dtype))


def build(args) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    vocab = read_vocab(args.vocab_gguf)
    os.makedirs(args.out, exist_ok=True)
    config = gemma3_config(vocab) if args.arch == "gemma3" else gemma4_config(vocab)
    torch.manual_seed(args.seed)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    randomize(model, args.seed)
    model.to(getattr(torch, args.dtype)).save_pretrained(args.out)

    # Tokenizer files go through transformers once, so they are what it writes for Gemma.
    staging = os.path.join(args.out, ".tokenizer")
    os.makedirs(staging, exist_ok=True)
    write_tokenizer_json(vocab, staging)
    AutoTokenizer.from_pretrained(staging).save_pretrained(args.out)
    for name in os.listdir(staging):
        os.remove(os.path.join(staging, name))
    os.rmdir(staging)
    if args.arch == "gemma3":
        write_sentencepiece_model(vocab, args.out)


def logits(args) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32, attn_implementation="eager")
    model.eval()
    ids = torch.tensor([[int(t) for t in args.tokens.split(",")]])
    with torch.no_grad():
        out = model(input_ids=ids).logits[0, -1].float().numpy()
    json.dump({"logits": out.astype(np.float64).tolist()}, sys.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("--arch", choices=["gemma3", "gemma4"], required=True)
    b.add_argument("--vocab-gguf", required=True)
    b.add_argument("--out", required=True)
    b.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    b.add_argument("--seed", type=int, default=1)
    l = sub.add_parser("logits")
    l.add_argument("--model", required=True)
    l.add_argument("--tokens", required=True)
    args = parser.parse_args()
    build(args) if args.command == "build" else logits(args)


if __name__ == "__main__":
    main()
