"""Logging configuration: one line per event, with the logger name; no print() in library code."""

from __future__ import annotations

import logging


def configure_logging(level: str = "INFO") -> None:
    root = logging.getLogger()
    if not any(getattr(h, "_deskmate", False) for h in root.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handler._deskmate = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(level.upper())
    for noisy in ("httpx", "chromadb", "sentence_transformers", "urllib3", "opentelemetry"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
