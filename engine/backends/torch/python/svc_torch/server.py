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
    def __init__(self, out):
        import numpy as np
        import torch

        from . import device as dev

        self.np, self.torch, self.dev = np, torch, dev
        self.out = out
        self.threads = dev.configure_threads()
        self.device = dev.choose_device(None)
        self.model = None
        self.lora = None
        self.optimizer = None
        self.checkpoint_mode = "auto"

    def send(self, header: dict, tensors=None) -> None:
        from .protocol import write_frame

        write_frame(self.out, header, tensors)

    def info(self) -> dict:
        dtype = self.model.compute_dtype if self.model else self.dev.compute_dtype(self.device)
        return {"device": self.dev.describe(self.device, self.threads), "dtype": self.dev.dtype_name(dtype)}

    def op_hello(self, req, tensors):
        return {"python": sys.version.split()[0], "torch": self.torch.__version__, "numpy": self.np.__version__,
                "threads": self.threads, "pid": os.getpid(), **self.info()}

    def op_load(self, req, tensors):
        from .gguf import GgufFile
        from .model import build_model, weight_names

        self.device = self.dev.choose_device(req.get("device"))
        cfg = req["config"]
        gguf = GgufFile(req["modelPath"])
        names = weight_names(cfg)
        missing = [n for n in names if n not in gguf.tensors]
        if missing:
            raise ValueError(f"GGUF {req['modelPath']} is missing tensor {missing[0]}" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
        total = sum(4 * gguf.tensors[n].count for n in names)
        loaded = [0]

        def on_tensor(name: str, nbytes: int) -> None:
            loaded[0] += nbytes
            self.send({"id": req["id"], "progress": {"loadedBytes": loaded[0], "totalBytes": total, "tensor": name}})

        dtype = self.dev.compute_dtype(self.device, req.get("dtype"))
        self.model = build_model(cfg, gguf.read, self.device, dtype, on_tensor)
        checkpoint = req.get("checkpointActivations", "auto")
        self.model.checkpoint_blocks = bool(checkpoint) if checkpoint != "auto" else False
        self.checkpoint_mode = checkpoint
        if req.get("logitsChunkBytes"):
            self.model.LOGITS_CHUNK_BYTES = int(req["logitsChunkBytes"])
        self.lora = None
        self.optimizer = None
        del gguf
        return {"parameters": sum(t.numel() for t in self.model.w.values()), **self.info()}

    def op_init_lora(self, req, tensors):
        from .lora import Lora

        if self.model is None:
            raise RuntimeError("load must come before init_lora")
        spec = req["spec"]
        self.lora = Lora(int(spec["r"]), float(spec["alpha"]), spec["targets"], tensors, self.device)
        self.optimizer = None
        return {"loraTensorCount": len(self.lora.params)}

    def _batch(self, req, tensors):
        torch = self.torch
        if self.model is None or self.lora is None:
            raise RuntimeError("load and init_lora must come before training or evaluation")
        b, t = int(req["batchSize"]), int(req["length"])
        inputs = torch.from_numpy(tensors["inputs"].reshape(b, t).astype("int64")).to(self.device)
        targets = torch.from_numpy(tensors["targets"].reshape(b, t).astype("int64")).to(self.device)
        mask = torch.from_numpy(tensors["mask"].reshape(b, t).copy()).to(self.device)
        if self.checkpoint_mode == "auto":
            self.model.checkpoint_blocks = self._activations_bytes(b, t) > 2 * 2**30
        return inputs, targets, mask

    def _activations_bytes(self, batch: int, length: int) -> int:
        """Rough bytes autograd keeps per step without checkpointing (see estimateTfjsMemory)."""
        c = self.model.cfg
        per_token_block = 12 * c["embeddingLength"] + 4 * c["feedForwardLength"] + 4 * c["headCount"] * c["headDim"]
        return 4 * batch * length * (c["blockCount"] * per_token_block + 3 * c["vocabSize"])

    def _loss(self, inputs, targets, mask):
        masked = float(mask.sum())
        with self.model.autocast():
            total = self.model.loss_sum(inputs, targets, mask, self.lora)
        return total / max(masked, 1.0), masked

    def op_train_step(self, req, tensors):
        from .optim import AdamW

        inputs, targets, mask = self._batch(req, tensors)
        settings = req["optimizer"]
        loss, _ = self._loss(inputs, targets, mask)
        value = float(loss.detach())
        if not self.np.isfinite(value):
            return {"loss": value, "gradNorm": None}
        loss.backward()
        fresh = AdamW(float(settings["beta1"]), float(settings["beta2"]), float(settings["epsilon"]),
                      float(settings["weightDecay"]), float(settings["maxGradNorm"]))
        # Moments persist across steps; other betas or clipping start a fresh optimiser (as tfjs does).
        if self.optimizer is None or self.optimizer.key() != fresh.key():
            self.optimizer = fresh
        for p in self.lora.params.values():
            if p.grad is None:
                p.grad = self.torch.zeros_like(p)
        grad_norm = self.optimizer.apply(self.lora.params, float(settings["learningRate"]))
        return {"loss": value, "gradNorm": grad_norm}

    def op_grads(self, req, tensors):
        """Debug/test: loss and LoRA gradients of a batch, without updating anything."""
        inputs, targets, mask = self._batch(req, tensors)
        loss, _ = self._loss(inputs, targets, mask)
        loss.backward()
        grads = {}
        for name, p in self.lora.params.items():
            grads[name] = (p.grad if p.grad is not None else self.torch.zeros_like(p)).detach().float().cpu().numpy()
            p.grad = None
        return {"loss": float(loss.detach())}, grads

    def op_eval(self, req, tensors):
        inputs, targets, mask = self._batch(req, tensors)
        masked = float(mask.sum())
        if masked == 0:
            return {"lossSum": 0.0, "maskedTokens": 0}
        with self.torch.no_grad(), self.model.autocast():
            total = self.model.loss_sum(inputs, targets, mask, self.lora)
        return {"lossSum": float(total), "maskedTokens": int(masked)}

    def op_logits(self, req, tensors):
        """Next-token logits at the last position of one sequence, with the current LoRA (tests, greedy)."""
        torch = self.torch
        if self.model is None:
            raise RuntimeError("load must come before logits")
        inputs = torch.from_numpy(tensors["inputs"].reshape(1, -1).astype("int64")).to(self.device)
        with torch.no_grad(), self.model.autocast():
            final = self.model.hidden(inputs, self.lora)[0, -1]
            logits = torch.nn.functional.linear(final, self.model.output_weight()).float()
        return {}, {"logits": logits.cpu().numpy()}

    def op_get_lora(self, req, tensors):
        if self.lora is None:
            raise RuntimeError("init_lora must come before get_lora")
        return {}, self.lora.to_numpy()

    def op_memory(self, req, tensors):
        rss, gpu = self.dev.peak_memory(self.device)
        return {"peakRssBytes": rss, "peakDeviceBytes": gpu}

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
            self.send({"id": rid, "ok": False, "error": describe_error(err)})
        return True


def main() -> int:
    out = _private_stdout()
    from .protocol import read_frame

    stdin = sys.stdin.buffer
    try:
        server = Server(out)
    except Exception as err:
        log(f"cannot start: {err}")
        raise
    log(f"ready: torch {server.torch.__version__} on {server.info()['device']}")
    while True:
        frame = read_frame(stdin)
        if frame is None:
            return 0
        header, tensors = frame
        if not server.handle(header, tensors):
            return 0


if __name__ == "__main__":
    sys.exit(main())
