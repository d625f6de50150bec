"""svc's PyTorch compute backend: a process the trainer worker talks to over stdin/stdout (PROTOCOL.md)."""
