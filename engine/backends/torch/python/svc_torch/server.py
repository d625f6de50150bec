"""
The torch backend's process: answers framed requests on stdin with framed replies on stdout
(PROTOCOL.md). stdout carries frames only: the real stdout is kept on a private descriptor and fd 1
is pointed at stderr, so a stray print (ours or a library's, even from C) lands in the log instead
of corrupting the stream.
"""

from __future__ import annotations

import os
import sys
import traceback

from .distributed import Ranks, is_communication_error, is_distributed


def _private_stdout():
    out_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(out_fd, "wb", buffering=0)


def describe_error(err: Exception) -> str:
    """Our own errors read as sentences; anything else keeps its type name for the bug report."""
    if isinstance(err, KeyError) and err.args:
        return str(err.args[0])
    if isinstance(err, (ValueError, RuntimeError)):
        return str(err)
    return f"{type(err).__name__}: {err}"


def log(message: str) -> None:
    sys.stderr.write(f"[svc-torch] {message}\n")
    sys.stderr.flush()


class Server:
    def __init__(self, out, ranks=None):
        import numpy as np
        import torch

        from . import device as dev

        self.np, self.torch, self.dev = np, torch, dev
        self.out = out
        # torchrun's ranks (distributed.Ranks) when this is one of several processes of a job, else None.
        self.ranks = ranks
        self.threads = dev.configure_threads()
        self.device = dev.choose_device(None)
        self.dtype = None
        self.base = None
        # What the base was read from: "gguf", or "safetensors" (a Hugging Face folder's own weights)
        self.source = None
        self.adapter = None
        self.trainer = None
        self.context_length = None
        self.checkpoint_mode = "auto"
        self.logits_chunk_bytes = None
        self.load_rss = 0

    def send(self, header: dict, tensors=None) -> None:
        from .protocol import write_frame

        if self.out is None:  # a rank other than 0: rank 0 alone speaks
            return
        write_frame(self.out, header, tensors)

    def info(self) -> dict:
        dtype = self.dtype or self.dev.compute_dtype(self.device)
        return {"device": self.dev.describe(self.device, self.threads), "dtype": self.dev.dtype_name(dtype)}

    def op_hello(self, req, tensors):
        import peft
        import transformers

        return {
            "python": sys.version.split()[0],
            "torch": self.torch.__version__,
            "numpy": self.np.__version__,
            "transformers": transformers.__version__,
            "peft": peft.__version__,
            "threads": self.threads,
            "pid": os.getpid(),
            "worldSize": self.ranks.world if self.ranks else 1,
            **({"strategy": self.ranks.strategy} if self.ranks else {}),
            **self.info(),
        }

    def op_load(self, req, tensors):
        from .gguf_base import load_gguf_base

        self.device = self.dev.choose_device(req.get("device"))
        if self.ranks and self.device.type == "cuda" and self.device.index is None:
            self.device = self.torch.device("cuda", self.ranks.local_rank)
        self.dtype = self.dev.compute_dtype(self.device, req.get("dtype"))
        self.base = self.adapter = self.trainer = None

        def on_tensor(name: str, loaded: int, total: int) -> None:
            self.send({"id": req["id"], "progress": {"loadedBytes": loaded, "totalBytes": total, "tensor": name}})

        # Eager attention in float32 gives llama.cpp's numbers to rounding; SDPA is the fast path otherwise.
        attention = "eager" if self.dtype == self.torch.float32 and self.device.type == "cpu" else "sdpa"
        quantized = req.get("quantizedBase") or "keep"
        if quantized not in ("keep", "dequantize"):
            raise ValueError(f"quantizedBase must be keep or dequantize, got {quantized!r}")
        # FSDP: the base stays on the meta device until init_lora has sharded it (sharded_load.py).
        deferred = self.ranks is not None and self.ranks.sharded
        # The libraries every rank needs, imported before the load's peak is measured (rank 0 has them from hello).
        import peft  # noqa: F401
        import transformers  # noqa: F401

        self.load_rss = self.dev.start_peak_rss()
        if req.get("hfFolder"):
            from .hf_base import load_hf_base

            self.base = load_hf_base(req["hfFolder"], req["modelPath"], self.device, self.dtype, attention, on_tensor, deferred=deferred)
            self.source = "safetensors"
        else:
            self.base = load_gguf_base(req["modelPath"], self.device, self.dtype, attention, on_tensor, keep_quantized=quantized == "keep", deferred=deferred)
            self.source = "gguf"
        self.context_length = int((req.get("config") or {}).get("contextLength") or 0) or None
        self.checkpoint_mode = req.get("checkpointActivations", "auto")
        self.logits_chunk_bytes = int(req.get("logitsChunkBytes") or 0) or None
        kept = sorted(set(self.base.quantized.values()) | set(self.base.quantized_tables.values()))
        dequantizer = None
        if kept and self.device.type == "cpu":
            from .quantized import native_dequantizer_status

            dequantizer = native_dequantizer_status()
            log(f"kept-quantised weights ({', '.join(kept)}): {dequantizer}")
        return {
            "parameters": self.base.parameters,
            "architecture": self.base.architecture,
            "projectionShapes": self.base.projection_shapes(),
            "baseBytes": sum(t.numel() * t.element_size() for t in [*self.base.model.parameters(), *self.base.model.buffers()]),
            "quantizedProjections": len(self.base.quantized),
            "quantizedTables": sorted(self.base.quantized_tables),
            "quantizedTypes": kept,
            "dequantizer": dequantizer,
            "source": self.source,
            **self.info(),
        }

    def op_init_lora(self, req, tensors):
        from .adapter import Adapter
        from .training import Trainer

        if self.base is None:
            raise RuntimeError("load must come before init_lora")
        sharded = self.ranks is not None and self.ranks.sharded
        if self.adapter is not None:  # a second adapter on the same base: start from the plain model
            if sharded:
                raise RuntimeError("an FSDP job trains one adapter per load: load the base again for another")
            self.base.model = self.adapter.model.unload()
        spec = req["spec"]
        self.adapter = Adapter(self.base, int(spec["r"]), float(spec["alpha"]), list(spec["targets"]), tensors, self.device)
        if sharded:
            from .fsdp import shard_decoder_layers

            layers = shard_decoder_layers(self.adapter.model, self.adapter.trainable(), self.device)
            self.base.weights.materialise(self.adapter.model, self.device)
            self.base.weights = None
            self.adapter.set_initial()
            log(f"rank {self.ranks.rank}: FSDP shards {layers} decoder layers across {self.ranks.world} ranks")
        self.trainer = Trainer(self.base, self.adapter, self.context_length)
        if self.logits_chunk_bytes:
            self.trainer.LOGITS_CHUNK_BYTES = self.logits_chunk_bytes
        if self.checkpoint_mode != "auto":
            self.trainer.set_checkpointing(bool(self.checkpoint_mode))
        from .fsdp import held_parameter_bytes

        # Each rank's peak resident memory from the start of load to here, above what it held before.
        grown = self.dev.peak_rss_since(self.load_rss)
        return {
            "loraTensorCount": len(self.adapter.params),
            "rankParameterBytes": held_parameter_bytes(self.adapter.model),
            "rankLoadRssBytes": self.ranks.gather(grown) if self.ranks else [grown],
        }

    def _batch(self, req, tensors):
        torch = self.torch
        if self.trainer is None:
            raise RuntimeError("load and init_lora must come before training or evaluation")
        b, t = int(req["batchSize"]), int(req["length"])
        inputs = torch.from_numpy(tensors["inputs"].reshape(b, t).astype("int64")).to(self.device)
        targets = torch.from_numpy(tensors["targets"].reshape(b, t).astype("int64")).to(self.device)
        mask = torch.from_numpy(tensors["mask"].reshape(b, t).copy()).to(self.device)
        if self.checkpoint_mode == "auto":
            self.trainer.set_checkpointing(self._activations_bytes(b, t) > 2 * 2**30)
        return inputs, targets, mask

    def _activations_bytes(self, batch: int, length: int) -> int:
        """Rough bytes autograd keeps per step without checkpointing (see estimateTfjsMemory)."""
        c = self.base.model.config

        def value(name, default):
            try:  # a heterogeneous config (Gemma 4) refuses per-layer fields read globally: take the widest
                return getattr(c, name, None) or default
            except Exception:
                return getattr(c, f"global_{name}", None) or default

        d, layers, heads = value("hidden_size", 0), value("num_hidden_layers", 1), value("num_attention_heads", 1)
        ff = value("intermediate_size", 4 * d)
        ff = max(ff) if isinstance(ff, (list, tuple)) else ff
        head_dim = value("head_dim", d // heads)
        per_token_layer = 12 * d + 4 * ff + 4 * heads * head_dim
        element = self.torch.finfo(self.dtype).bits // 8  # activations are in the base's dtype
        return batch * length * (element * layers * per_token_layer + 4 * 3 * c.vocab_size)

    def _loss(self, inputs, targets, mask):
        masked = float(mask.sum())
        total, correct = self.trainer.loss_sum(inputs, targets, mask)
        return total / max(masked, 1.0), correct

    def op_train_step(self, req, tensors):
        if self.ranks:
            return self._train_step_shard(req, tensors)
        inputs, targets, mask = self._batch(req, tensors)
        loss, correct = self._loss(inputs, targets, mask)
        value = float(loss.detach())
        if not self.np.isfinite(value):
            return {"loss": value, "gradNorm": None, "correctTokens": correct}
        loss.backward()
        return {"loss": value, "gradNorm": self.trainer.step(req["optimizer"]), "correctTokens": correct}

    def _shard(self, req, tensors):
        """This rank's rows of the batch every rank received, and the whole batch's masked-token count."""
        rows = self.ranks.rows(int(req["batchSize"]))
        masked = float(tensors["mask"].sum())
        part = {name: tensors[name][rows] for name in ("inputs", "targets", "mask")}
        size = part["inputs"].shape[0]
        if size == 0 and self.ranks.sharded:
            # FSDP gathers each layer's weights from every rank as it runs: this rank runs one row
            # with nothing masked in, which adds nothing to the loss or the gradients.
            part = {name: tensors[name][:1] for name in ("inputs", "targets")}
            part["mask"] = self.np.zeros_like(tensors["mask"][:1])
            size = 1
        if size == 0:  # a last batch smaller than the world: this rank only joins the sums
            return None, masked
        return self._batch({"batchSize": size, "length": req["length"]}, part), masked

    def _train_step_shard(self, req, tensors):
        torch = self.torch
        if self.trainer is None:
            raise RuntimeError("load and init_lora must come before training or evaluation")
        batch, masked = self._shard(req, tensors)
        params = self.adapter.trainable()
        local = torch.zeros((), device=self.device)
        correct = 0
        if batch is not None:
            total, correct = self.trainer.loss_sum(*batch)
            local = total / max(masked, 1.0)
            if local.requires_grad:
                local.backward()
        grads = [p.grad.reshape(-1) if p.grad is not None else torch.zeros(p.numel(), device=self.device) for p in params]
        # One bucket: the gradients, the loss and the correct tokens summed over ranks in a single all-reduce.
        tail = torch.tensor([float(local.detach()), float(correct)], device=self.device)
        bucket = self.ranks.sum_(torch.cat(grads + [tail]))
        value, correct = float(bucket[-2]), int(round(float(bucket[-1])))
        if not self.np.isfinite(value):
            for p in params:
                p.grad = None
            return {"loss": value, "gradNorm": None, "correctTokens": correct}
        offset = 0
        for p in params:
            p.grad = bucket[offset : offset + p.numel()].view_as(p).to(p.dtype)
            offset += p.numel()
        return {"loss": value, "gradNorm": self.trainer.step(req["optimizer"]), "correctTokens": correct}

    def op_grads(self, req, tensors):
        """Debug/test: loss and LoRA gradients of a batch, without updating anything."""
        inputs, targets, mask = self._batch(req, tensors)
        loss, _ = self._loss(inputs, targets, mask)
        loss.backward()
        grads = self.adapter.grads_to_numpy()
        for p in self.adapter.trainable():
            p.grad = None
        return {"loss": float(loss.detach())}, grads

    def op_eval(self, req, tensors):
        if self.ranks:
            batch, masked = self._shard(req, tensors)
            sums = self.torch.zeros(2, device=self.device)  # loss sum, correct tokens
            if batch is not None and masked > 0:
                with self.torch.no_grad():
                    total, correct = self.trainer.loss_sum(*batch)
                sums += self.torch.stack([total.detach().float().reshape(()), self.torch.tensor(float(correct), device=self.device)])
            sums = self.ranks.sum_(sums)
            return {"lossSum": float(sums[0]) if masked else 0.0, "maskedTokens": int(masked), "correctTokens": int(round(float(sums[1])))}
        inputs, targets, mask = self._batch(req, tensors)
        masked = float(mask.sum())
        if masked == 0:
            return {"lossSum": 0.0, "maskedTokens": 0, "correctTokens": 0}
        with self.torch.no_grad():
            total, correct = self.trainer.loss_sum(inputs, targets, mask)
        return {"lossSum": float(total), "maskedTokens": int(masked), "correctTokens": correct}

    def op_logits(self, req, tensors):
        """Next-token logits at the last position of one sequence, with the current LoRA (tests, greedy)."""
        torch = self.torch
        if self.base is None:
            raise RuntimeError("load must come before logits")
        from .training import Trainer

        if self.trainer is None and self.base.weights is not None:
            raise RuntimeError("under FSDP the base is read when the adapter is: init_lora must come before logits")
        model = self.trainer or Trainer(self.base, None, self.context_length)
        inputs = torch.from_numpy(tensors["inputs"].reshape(1, -1).astype("int64")).to(self.device)
        with torch.no_grad():
            final = model.hidden(inputs)[0, -1:]
            logits = model.logits(final)[0]
        return {}, {"logits": logits.cpu().numpy()}

    def op_get_lora(self, req, tensors):
        if self.adapter is None:
            raise RuntimeError("init_lora must come before get_lora")
        return {}, self.adapter.to_numpy()

    def op_memory(self, req, tensors):
        rss, gpu = self.dev.peak_memory(self.device)
        return {"peakRssBytes": rss, "peakDeviceBytes": gpu, "checkpointing": bool(self.trainer and self.trainer.checkpointing)}

    def handle(self, req: dict, tensors) -> bool:
        op = req.get("op")
        rid = req.get("id")
        if op == "shutdown":
            self.send({"id": rid, "ok": True})
            return False
        handler = getattr(self, f"op_{op}", None)
        try:
            if handler is None:
                raise ValueError(f"unknown op {op!r}")
            result = handler(req, tensors)
            reply, out_tensors = result if isinstance(result, tuple) else (result, None)
            self.send({"id": rid, "ok": True, **reply}, out_tensors)
        except Exception as err:  # reported to the client; the process stays usable
            log(traceback.format_exc().rstrip())
            if self.ranks and op in self.ranks.collective_ops and is_communication_error(err):
                # Another rank is gone and the group cannot be used again: end, so torchrun ends the job.
                log(f"rank {self.ranks.rank}: a collective failed; exiting")
                os._exit(1)
            self.send({"id": rid, "ok": False, "error": describe_error(err)})
        return True


def main() -> int:
    out = _private_stdout()
    from .protocol import read_frame

    ranks = None
    try:
        if is_distributed():
            ranks = Ranks()
        server = Server(out if ranks is None or ranks.speaker else None, ranks)
    except Exception as err:
        log(f"cannot start: {err}")
        raise
    where = f" (rank {ranks.rank} of {ranks.world}, {ranks.backend}, {ranks.strategy})" if ranks else ""
    log(f"ready: torch {server.torch.__version__} on {server.info()['device']}{where}")
    if ranks is not None and not ranks.speaker:
        return _follow(server, ranks)
    stdin = sys.stdin.buffer
    while True:
        frame = read_frame(stdin)
        if frame is None:  # end of input: the other ranks end too
            if ranks is not None:
                ranks.broadcast_request(({"op": "shutdown", "id": None}, {}))
                ranks.close()
            return 0
        header, tensors = frame
        if ranks is not None and header.get("op") in ranks.collective_ops:
            ranks.broadcast_request(frame)
        if not server.handle(header, tensors):
            if ranks is not None:
                ranks.close()
            return 0


def _follow(server: "Server", ranks: "Ranks") -> int:
    """A rank other than 0: runs what rank 0 broadcasts, until its shutdown."""
    while True:
        header, tensors = ranks.broadcast_request(None)
        if not server.handle(header, tensors):
            ranks.close()
            return 0


if __name__ == "__main__":
    sys.exit(main())
