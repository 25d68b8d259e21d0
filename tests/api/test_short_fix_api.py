"""A fix of one or two steps is shown whole, then "did that fix it?" (through the real app: MiniLM, Chroma, POST /chat).

Walked one step at a time, such a fix costs the employee a reply per step, and its first step is most often only the
way to a setting. The conversation goes on from its last step: "it works" ends it, "still broken" offers a ticket.
"""

from __future__ import annotations

import pytest

from tests.conftest import chat

pytestmark = pytest.mark.slow

ROOM_DISPLAY = """# The meeting room display shows no calendar

## Symptoms
The room display beside the door shows "No calendar" instead of today's bookings.

## Resolution
1. Hold the display's power button for five seconds until it restarts.
2. When it asks, sign in again with the room account printed on the label underneath.

The display shows today's bookings again within a minute.
"""

BADGE_PRINTER = """# The badge printer prints blank cards

## Symptoms
Visitor badges come out of the reception printer blank or streaked.

## Resolution
1. Open the front cover and take out the ribbon cartridge.
2. Check that the ribbon is not torn; replace it with a new one from the drawer if it is.
3. Push the cartridge back until it clicks, and close the cover.
4. Hold the feed button for three seconds to clean the print head.
5. Print a test badge from the reception app.
"""

ROOM_SCREEN = """# Share your laptop screen on the meeting room screen

## Share your screen
1. Plug the white cable on the table into your laptop.
2. Press the Input button on the remote until the screen shows Table.
3. On your laptop, press the Windows key and P together and choose Duplicate.
4. Adjust the volume with the remote if the room cannot hear you.
"""


@pytest.fixture
def short_fix_kb(tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "room-display.md").write_text(ROOM_DISPLAY)
    (kb / "badge-printer.md").write_text(BADGE_PRINTER)
    (kb / "room-screen.md").write_text(ROOM_SCREEN)
    return kb


def test_a_two_step_fix_is_shown_whole_and_still_broken_offers_a_ticket(serve, short_fix_kb):
    with serve(kb_dir=short_fix_kb) as client:
        first = chat(client, "the room display by the door is not working, it says no calendar")
        assert first["action"] == "troubleshoot" and first["sources"][0]["source"].endswith("room-display.md")
        assert "1. Hold the display's power button" in first["answer"]
        assert "2. When it asks, sign in again" in first["answer"] and "Step 1 of" not in first["answer"]
        assert "did that fix it?" in first["answer"]
        assert "bookings again within a minute" in first["answer"]  # the section quoted whole, not only its steps
        broken = chat(client, "still broken", first["session_id"])
        assert "Shall I create it?" in broken["answer"] and "the 2 steps you tried" in broken["answer"]
        still = chat(client, "it still doesn't work", first["session_id"])  # no yes: the offer is asked again
        assert (
            still["answer"].startswith("I'm sorry it's still not working.") and "Shall I create it?" in still["answer"]
        )

        again = chat(client, "the room display by the door is not working, it says no calendar")
        nothing_left = chat(client, "next", again["session_id"])  # every step was shown: nothing more to walk
        assert "That was the last step" in nothing_left["answer"] and "Step " not in nothing_left["answer"]
        done = chat(client, "that worked, thanks", again["session_id"])
        assert done["troubleshooting"]["status"] == "resolved" and "ticket" not in done["answer"].lower()


def test_a_longer_fix_is_still_walked_one_step_at_a_time(serve, short_fix_kb):
    with serve(kb_dir=short_fix_kb) as client:
        first = chat(client, "badges from the reception printer keep coming out blank")
        assert first["sources"][0]["source"].endswith("badge-printer.md")
        assert "**Step 1 of 5:**" in first["answer"] and "5. Print a test badge" not in first["answer"]


def test_saying_the_answers_steps_did_not_work_walks_them_one_at_a_time_and_says_a_ticket_is_there(serve, short_fix_kb):
    with serve(kb_dir=short_fix_kb) as client:
        first = chat(client, "how do I share my laptop screen on the meeting room screen?")
        assert first["action"] == "answer" and "4. Adjust the volume" in first["answer"]
        failed = chat(client, "that didn't work", first["session_id"])
        assert failed["action"] == "troubleshoot" and "I'm sorry those steps didn't fix it" in failed["answer"]
        assert '"open a ticket"' in failed["answer"] and "Step 1 of 4:** Plug the white cable" in failed["answer"]
        fresh = chat(client, "the room display by the door is not working, it says no calendar")
        assert "I'm sorry" not in fresh["answer"]  # a first walkthrough is no apology for an answer never given
