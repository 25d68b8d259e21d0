"""A documented procedure walked through: every step reachable, only real fix attempts count as failures."""

import pytest

from core.lexicon import reply_kind
from graphs.support import fresh_turn
from nodes.support.procedure import asks_all_steps, asks_to_advance, is_fix_attempt, safe_end, takes_away
from nodes.support.troubleshoot import advance

# a repair procedure as help articles write it: preambles, then the changes, a leave that a join must follow
REJOIN = [
    "Exit Outlook and any other Office apps.",
    "Open **Settings**.",
    "Select **Accounts** > **Access work or school**.",
    "Open an elevated command prompt and run `dsregcmd /leave`.",
    "Restart the computer.",
    "Run `dsregcmd /join` to join the device again.",
    "Sign in with your work account and check that Outlook connects.",
]


def article_ref(c, answerable: float) -> dict:
    """An article found by the search, from its one retrieved chunk, answering with probability `answerable`."""
    return {
        "doc_id": c["doc_id"],
        "title": c["title"],
        "source": c["source"],
        "score": c["score"],
        "answerable": answerable,
        "confidence": answerable,
        "hits": [{"chunk_id": c["chunk_id"], "score": c["score"], "section": c["section"], "role": ""}],
    }


def flow_of(steps, current=0, failed=0):
    return {
        "issue": "Outlook keeps asking for my password",
        "topic": "outlook",
        "steps": [{"step": s, "outcome": "pending"} for s in steps],
        "current": current,
        "failed": failed,
        "asked_outcome": False,
        "status": "in_progress",
        "source": {},
        "os": "",
    }


@pytest.fixture
def reply(fake_kb_context):
    ctx = fake_kb_context()

    def send(flow, text):
        turn = fresh_turn(text)
        turn["reply_kind"] = reply_kind(text)
        return advance({"turn": turn, "troubleshooting": flow}, ctx, {"configurable": {}})

    return send


@pytest.mark.parametrize(
    "step",
    ["Exit Outlook.", "Open **Settings**.", "Select **Start**, then type *control panel*.", "Go to File > Options."],
)
def test_a_preamble_is_not_an_attempt_at_the_fix(step):
    assert not is_fix_attempt(step)


@pytest.mark.parametrize(
    "step",
    [
        "Restart the computer.",
        "Select **Repair**.",
        "Clear the browser cache.",
        "Quit Secure Client completely and start it again.",
        "Turn off **Cached Exchange Mode**.",
        "Run `dsregcmd /join`.",
    ],
)
def test_a_step_that_changes_something_is_an_attempt(step):
    assert is_fix_attempt(step)


def test_a_bounded_procedure_never_ends_right_after_a_step_that_takes_something_away():
    assert takes_away(REJOIN[3]) and not takes_away(REJOIN[4])
    assert safe_end(REJOIN, 4) == 3  # not ending on "dsregcmd /leave"
    assert safe_end(REJOIN, 5) == 5
    assert safe_end(REJOIN, 40) == len(REJOIN)


@pytest.mark.parametrize("text", ["next", "Next step", "ok", "OK, done", "done", "what's next?", "continue"])
def test_next_done_and_ok_advance(text):
    assert asks_to_advance(text)


@pytest.mark.parametrize("text", ["it works", "still broken", "no luck", "my printer is also jammed"])
def test_outcomes_and_new_problems_do_not_advance(text):
    assert not asks_to_advance(text)


@pytest.mark.parametrize("text", ["show me all the steps", "all steps", "give me the whole procedure", "all at once"])
def test_asking_for_every_step_at_once_is_recognised(text):
    assert asks_all_steps(text)


def test_next_walks_every_step_to_the_end_without_counting_a_failure(reply):
    flow = flow_of(REJOIN)
    shown = []
    for _ in range(len(REJOIN)):
        out = reply(flow, "next")
        flow = out["troubleshooting"]
        shown.append(out["answer"])
    assert flow["status"] == "completed" and flow["failed"] == 0
    assert [s["outcome"] for s in flow["steps"]] == ["done"] * len(REJOIN)
    assert "Step 7 of 7:** Sign in" in shown[-2] and "last step" in shown[-1]
    assert not any("Back to your issue" in text for text in shown)
    escalated = reply(flow, "still broken")
    assert escalated["troubleshooting"]["status"] == "escalated" and "technician" in escalated["answer"]


def test_still_broken_after_preambles_moves_on_without_escalating(reply):
    flow = flow_of(REJOIN)
    for _ in range(3):  # exit, open settings, select: none of them is an attempt at the fix
        out = reply(flow, "still broken")
        flow = out["troubleshooting"]
    assert flow["status"] == "in_progress" and flow["failed"] == 0 and flow["current"] == 3
    assert "dsregcmd /leave" in out["answer"]


def test_three_failed_fix_attempts_escalate(reply):
    flow = flow_of(REJOIN, current=3)
    for _ in range(3):
        out = reply(flow, "still broken")
        flow = out["troubleshooting"]
    assert flow["status"] == "escalated" and flow["failed"] == 3


def test_all_steps_lists_the_whole_procedure_in_order_then_asks_for_the_outcome(reply):
    out = reply(flow_of(REJOIN), "show me all the steps")
    text = out["answer"]
    positions = [text.index(step) for step in REJOIN]
    assert positions == sorted(positions) and out["needs_input"]
    assert reply(out["troubleshooting"], "it works")["troubleshooting"]["status"] == "resolved"


class ArticlesByDoc:
    """The lexical port's `document_chunks`: every chunk of an article, as the index keeps it."""

    def __init__(self, chunks):
        self.chunks = chunks

    def document_chunks(self, doc_id, groups):  # no restricted chunks here: every caller may read them all
        return [c for c in self.chunks if c["doc_id"] == doc_id]


def test_steps_found_in_a_runner_up_article_are_its_whole_procedure_not_the_passage_found(fake_kb_context):
    from nodes.support.troubleshoot import walkthrough
    from tests.fakes import chunk

    faq = chunk("Paste options decide which formatting is kept.", title="Paste options", doc_id="faq", score=0.6)
    first = "Check the option first:\n1. Go to File > Options > Advanced.\n2. Tick Show Paste Options."
    second = "To find an add-in that conflicts:\n1. Find the Excel icon.\n2. Hold CTRL and start Excel.\n3. Select Yes."
    parts = [
        chunk(first, title="Paste is greyed out", section="Resolution", doc_id="fix", chunk_index=0, chunk_id="f0"),
        chunk(second, title="Paste is greyed out", section="Resolution", doc_id="fix", chunk_index=1, chunk_id="f1"),
    ]
    found = {**parts[1], "score": 0.55}
    turn = fresh_turn("paste special is greyed out")
    turn.update(
        retrieved_chunks=[faq, found], articles=[article_ref(faq, 0.6), article_ref(found, 0.55)], question_type="fix"
    )
    ctx = fake_kb_context(lexical=ArticlesByDoc([faq, *parts]), min_score=0.3)
    steps, anchor, _ = walkthrough({"turn": turn}, ctx)
    assert [s.splitlines()[0] for s in steps] == [
        "Check the option first: Go to File > Options > Advanced.",
        "Tick Show Paste Options.",
        "To find an add-in that conflicts: Find the Excel icon.",
        "Hold CTRL and start Excel.",
        "Select Yes.",
    ]
    assert anchor["doc_id"] == "fix" and anchor["section"] == "Resolution"


def test_a_plain_section_of_the_best_article_is_not_traded_for_another_articles_steps(fake_kb_context):
    from nodes.support.troubleshoot import walkthrough
    from tests.fakes import chunk

    address = "Apps from other vendors connect to a longer address: https://files.example.com/dav/USERNAME/."
    manual = [
        chunk(
            "Sign in to the desktop app with the normal address.",
            title="Connecting apps",
            section="Desktop app",
            doc_id="apps",
            chunk_index=0,
            chunk_id="a0",
        ),
        chunk(
            address,
            title="Connecting apps",
            section="Other file apps",
            doc_id="apps",
            chunk_index=1,
            chunk_id="a1",
            score=0.6,
        ),
    ]
    steps_text = "To install the phone app:\n1. Open the app store.\n2. Install the app.\n3. Sign in."
    other = chunk(steps_text, title="Phone app", section="Install the app", doc_id="phone", chunk_id="p0", score=0.5)
    turn = fresh_turn("which address do I enter in my file app? the normal address doesnt work")
    turn.update(
        retrieved_chunks=[manual[1], other],
        articles=[article_ref(manual[1], 0.6), article_ref(other, 0.5)],
        question_type="fix",
    )
    ctx = fake_kb_context(lexical=ArticlesByDoc([*manual, other]), min_score=0.3)
    steps, anchor, _ = walkthrough({"turn": turn}, ctx)
    assert steps == [] and anchor is None  # the answer quotes "Other file apps" instead of walking another article


@pytest.mark.parametrize(
    ("step", "attempt"),
    [
        ("Stop. Do not enter anything else, and close the browser tab.", False),
        ("Do not switch the computer off.", False),
        ("Stop the Windows Search service.", True),
        ("Restart the laptop.", True),
    ],
)
def test_a_step_that_tells_the_employee_to_hold_back_is_no_attempt_at_the_fix(step, attempt):
    from nodes.support.procedure import is_fix_attempt

    assert is_fix_attempt(step) is attempt


@pytest.mark.parametrize(
    ("heading", "walked"),
    [
        ("Security > If you clicked a link or entered your password", False),
        ("If you've lost your badge", False),
        ("Report a suspicious message", False),
        ("If your laptop will not start", True),
        ("Resolution", True),
    ],
)
def test_what_to_do_after_something_happened_is_no_fix_to_try_one_step_at_a_time(heading, walked):
    from nodes.support.decide import is_fix_to_try

    assert is_fix_to_try((["Do this.", "Then that."], {"section": heading}, "")) is walked
