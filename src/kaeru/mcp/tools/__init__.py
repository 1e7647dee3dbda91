"""Tool families; each module exposes `register(registry)` and registers nothing at import time."""
