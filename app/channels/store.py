"""What the chat platforms keep in the relational store (both engines): deliveries handled once, the threads
tickets came from, and posted cards a button press redraws."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from sqlalchemy import delete, select, update

from app.storage import Database
from app.storage.schema import channel_cards, channel_deliveries, channel_ticket_threads

DELIVERY_MEMORY_S = 24 * 3600  # Slack retries for minutes; a day is plenty, and bounds the table
CARD_MEMORY_S = 7 * 24 * 3600  # a card's buttons redraw it for a week; after that a press is answered, not redrawn


@dataclass(frozen=True)
class TicketThread:
    ticket_id: str
    platform: str
    thread: dict
    last_status: str


class ChannelStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def first_delivery(self, key: str) -> bool:
        """True the first time `key` is seen, on any replica; False for a retry or a second press."""
        with self.db.begin() as conn:
            inserted = conn.execute(
                self.db.insert(channel_deliveries)
                .values(key=key[:200], at=time.time())
                .on_conflict_do_nothing(index_elements=["key"])
            )
            return inserted.rowcount == 1

    def prune(self, *, older_than_s: float = DELIVERY_MEMORY_S, cards_older_than_s: float = CARD_MEMORY_S) -> int:
        with self.db.begin() as conn:
            pruned = conn.execute(
                delete(channel_deliveries).where(channel_deliveries.c.at < time.time() - older_than_s)
            ).rowcount
            return (
                pruned
                + conn.execute(
                    delete(channel_cards).where(channel_cards.c.at < time.time() - cards_older_than_s)
                ).rowcount
            )

    def keep_card(self, key: str, card: dict) -> None:
        """Remember a posted card (a second post under the same key replaces it)."""
        with self.db.begin() as conn:
            conn.execute(delete(channel_cards).where(channel_cards.c.key == key[:200]))
            conn.execute(channel_cards.insert().values(key=key[:200], card=json.dumps(card), at=time.time()))

    def card(self, key: str) -> dict | None:
        with self.db.connect() as conn:
            raw = conn.execute(select(channel_cards.c.card).where(channel_cards.c.key == key[:200])).scalar()
            return json.loads(raw) if raw else None

    def link_ticket(self, ticket_id: str, platform: str, thread: dict, status: str) -> None:
        """Remember the thread a ticket was created from (a second link of the same ticket is ignored)."""
        with self.db.begin() as conn:
            conn.execute(
                self.db.insert(channel_ticket_threads)
                .values(
                    ticket_id=ticket_id,
                    platform=platform,
                    thread=json.dumps(thread),
                    last_status=status,
                    open=1,
                    created_at=time.time(),
                )
                .on_conflict_do_nothing(index_elements=["ticket_id"])
            )

    def open_threads(self, platform: str, *, limit: int = 200) -> list[TicketThread]:
        with self.db.connect() as conn:
            rows = conn.execute(
                select(channel_ticket_threads)
                .where(channel_ticket_threads.c.platform == platform, channel_ticket_threads.c.open == 1)
                .order_by(channel_ticket_threads.c.created_at)
                .limit(limit)
            ).mappings()
            return [
                TicketThread(r["ticket_id"], r["platform"], json.loads(r["thread"]), r["last_status"]) for r in rows
            ]

    def claim_status(self, ticket_id: str, seen: str, now: str, *, still_open: bool) -> bool:
        """Move a thread's told status from `seen` to `now`; True for the one replica that moved it (and posts)."""
        with self.db.begin() as conn:
            moved = conn.execute(
                update(channel_ticket_threads)
                .where(channel_ticket_threads.c.ticket_id == ticket_id, channel_ticket_threads.c.last_status == seen)
                .values(last_status=now, open=1 if still_open else 0)
            )
            return moved.rowcount == 1
