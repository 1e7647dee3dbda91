"""Importers: the official MCP `memory` server's JSONL, a folder of Markdown notes, the original
kaeru's Markdown export — each read into a `core.Batch` and written by `core.apply`."""

from __future__ import annotations

from kaeru.export.importers.core import Batch, Item, Link, Report, apply

__all__ = ["Batch", "Item", "Link", "Report", "apply"]
