"""The answer composer over whole articles (nodes/compose.py), on articles written in each common layout."""

import pytest

from graphs.records import RetrievedChunk
from nodes.compose import (article_sections, choose_target, question_type, rank_articles, render, target_steps)
from nodes.indexing.roles import section_role


def article(doc_id: str, title: str, parts: list[tuple[str, str]]) -> list[RetrievedChunk]:
    """Chunks of one article: (heading path joined by ' > ', body) in document order."""
    chunks = []
    for index, (section, text) in enumerate(parts):
        path = section.split(" > ") if section else []
        chunks.append(RetrievedChunk(chunk_id=f"{doc_id}-{index}", doc_id=doc_id, title=title,
                                     source=f"kb/{doc_id}.md", section=section, os="", chunk_index=index, text=text,
                                     score=0.0, role=section_role(path, text.splitlines())))
    return chunks


def hit(chunks: list[RetrievedChunk], section: str, score: float) -> RetrievedChunk:
    chunk = next(c for c in chunks if c["section"] == section)
    return {**chunk, "score": score}


SYMPTOMS_CAUSE_RESOLUTION = article("cal", "Calendar shows a red warning for one person", [
    ("Symptoms", "When you open a colleague's calendar, you see a red triangle instead of their free/busy times."),
    ("Cause", "The calendar has more than 1,000 items in one time slot."),
    ("Resolution", "To fix this, ask the calendar's owner to:\n1. Open the calendar in list view.\n"
                   "2. Sort by start time.\n3. Delete the duplicate items in the busy slot.\n"
                   "  ```\n  Get-CalendarDiagnosticLog -Identity owner\n  ```\n4. Wait ten minutes and look again."),
    ("More information", "1. Turn on logging.\n2. Read the log for ResultSetTooBig."),
])

METHODS = article("spell", "Spell check does nothing in one document", [
    ("Symptoms", "Misspelled words are not underlined and the check says it is complete."),
    ("Resolution", "Try these methods in order."),
    ("Resolution > Method 1: Install the proofing tools", "1. Open Add or remove programs.\n2. Modify Office."),
    ("Resolution > Method 2: Clear 'Do not check spelling'", "1. Select all text.\n2. Open Language.\n"
                                                              "3. Clear 'Do not check spelling or grammar'."),
    ("Resolution > Method 3: Reset the registry key", "1. Open the registry editor.\n2. Delete the Proofing key."),
])

SIBLING_OPTIONS = article("blank", "A workbook opens as a grey window", [
    ("Symptoms", "Double-clicking a workbook opens Excel with a blank grey window."),
    ("Resolution", "Try the options below in the order given."),
    ("Option 1: Unhide the window", "1. Select View.\n2. Select Unhide."),
    ("Option 2: Ignore other applications", "1. Open File > Options > Advanced.\n2. Clear 'Ignore other "
                                            "applications that use DDE'."),
])

KCS = article("kcs", "VPN drops every 20 minutes", [
    ("Issue", "The VPN disconnects every 20 minutes while working from home."),
    ("Environment", "Windows 11, VPN client 5.1"),
    ("Resolution", "1. Open the VPN client settings.\n2. Turn off 'Disconnect on idle'.\n3. Reconnect."),
    ("Cause", "An idle timeout in the client profile."),
])

HOW_TO = article("merge", "Combining documents", [
    ("", "You can combine several documents into one."),
    ("Insert documents into one file", "1. Open the first document.\n2. Select Insert > Object > Text from "
                                       "File.\n3. Choose the other files.\n  ```powershell\n  Get-ChildItem *.docx\n"
                                       "  ```\n4. Save."),
    ("See also", "Compare two documents."),
])


def test_a_problem_described_gets_the_resolution_not_the_symptoms_it_matched():
    hits = [hit(SYMPTOMS_CAUSE_RESOLUTION, "Symptoms", 0.6)]
    target = choose_target(article_sections(SYMPTOMS_CAUSE_RESOLUTION), hits, "fix",
                           "i see a red triangle on my boss's calendar")
    text, cut = render(target)
    assert [s.name for s in target.sections] == ["Resolution"]
    assert "1. Open the calendar in list view." in text and "4. Wait ten minutes" in text and not cut
    assert "red triangle" in target.matches  # the symptoms only as a one-line confirmation
    assert "red triangle" not in text


def test_the_code_under_a_step_stays_with_that_step():
    target = choose_target(article_sections(SYMPTOMS_CAUSE_RESOLUTION), [], "fix", "calendar warning")
    steps = target_steps(target)
    assert len(steps) == 4
    assert "Get-CalendarDiagnosticLog" in steps[2] and steps[2].startswith("Delete the duplicate items")


def test_a_why_question_gets_the_cause():
    hits = [hit(SYMPTOMS_CAUSE_RESOLUTION, "Symptoms", 0.6)]
    target = choose_target(article_sections(SYMPTOMS_CAUSE_RESOLUTION), hits, "why", "why is her calendar red")
    assert [s.role for s in target.sections] == ["cause"]


def test_the_first_method_is_quoted_and_the_others_named():
    hits = [hit(METHODS, "Symptoms", 0.5)]
    target = choose_target(article_sections(METHODS), hits, "fix", "spell check ignores typos")
    text, _ = render(target)
    assert "Try these methods in order." in text and "Open Add or remove programs" in text
    assert "Delete the Proofing key" not in text
    assert target.alternatives == ["Method 2: Clear 'Do not check spelling'", "Method 3: Reset the registry key"]


def test_a_method_the_search_clearly_favours_is_quoted_instead_of_the_first():
    hits = [hit(METHODS, "Resolution > Method 2: Clear 'Do not check spelling'", 0.6), hit(METHODS, "Symptoms", 0.4)]
    target = choose_target(article_sections(METHODS), hits, "fix", "do not check spelling is ticked")
    assert "Clear 'Do not check spelling or grammar'" in render(target)[0]
    assert "Method 1: Install the proofing tools" in target.alternatives


def test_options_written_beside_the_resolution_heading_are_alternatives_too():
    hits = [hit(SIBLING_OPTIONS, "Symptoms", 0.5)]
    target = choose_target(article_sections(SIBLING_OPTIONS), hits, "fix", "excel opens grey")
    text, _ = render(target)
    assert "Try the options below" in text and "Select Unhide" in text and "DDE" not in text
    assert target.alternatives == ["Option 2: Ignore other applications"]


def test_a_kcs_article_answers_from_its_resolution_section():
    hits = [hit(KCS, "Issue", 0.7), hit(KCS, "Environment", 0.3)]
    target = choose_target(article_sections(KCS), hits, "fix", "vpn keeps dropping")
    assert [s.name for s in target.sections] == ["Resolution"]
    assert len(target_steps(target)) == 3


def test_a_how_to_question_gets_the_procedure_with_its_code_block_whole():
    hits = [hit(HOW_TO, "", 0.5)]
    target = choose_target(article_sections(HOW_TO), hits, "how-to", "how do i combine documents")
    text, _ = render(target)
    assert [s.name for s in target.sections] == ["Insert documents into one file"]
    assert "```powershell" in text and "Get-ChildItem *.docx" in text and "4. Save." in text


def test_a_long_answer_is_cut_between_lines_and_never_inside_a_code_block():
    body = "\n".join(f"{i}. Step number {i} with some words to make it longer." for i in range(1, 40))
    body += "\n```\n" + "\n".join(f"line {i}" for i in range(50)) + "\n```\n40. The last step."
    long = article("long", "Long", [("Resolution", body)])
    text, cut = render(choose_target(article_sections(long), [], "fix", "x"), limit=2200)  # limit inside the code
    assert cut and text.count("```") == 2 and text.endswith("```") and "line 49" in text


def test_several_good_chunks_of_one_article_beat_one_lucky_chunk_of_another():
    lucky = article("lucky", "Lucky", [("Symptoms", "x")])
    ranked = rank_articles([hit(lucky, "Symptoms", 0.50), hit(KCS, "Issue", 0.49), hit(KCS, "Resolution", 0.45)])
    assert ranked[0].doc_id == "kcs"


@pytest.mark.parametrize("text, expected", [
    ("outlook keeps asking for my password", "fix"),
    ("i cant see my boss's free/busy, her calendar shows a red triangle", "fix"),
    ("how do i fix the red triangle on the calendar", "fix"),
    ("how do I merge two word files into one", "how-to"),
    ("is there a proper way to combine 6 documents", "how-to"),
    ("why does my mailbox say it is full", "why"),
    ("track changes is greyed out in the legal doc. why??", "why"),
    ("where do i download the excel viewer", "where"),
    ("what is the Files folder in a mailbox", "what-is"),
])
def test_question_types(text, expected):
    assert question_type(text) == expected
