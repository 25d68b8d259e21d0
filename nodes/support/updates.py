"""How a step's update reaches the state: this turn's keys under `turn` (graphs/support.py, Turn), the
session's beside it. A step that writes both names the session keys it owns."""

from __future__ import annotations

from typing import Collection


def split_update(update: dict, session_keys: Collection[str]) -> dict:
    """A flat update as the state takes it: the named session keys at the top, every other key in `turn`."""
    turn = {k: v for k, v in update.items() if k not in session_keys}
    return {"turn": turn, **{k: v for k, v in update.items() if k in session_keys}}
