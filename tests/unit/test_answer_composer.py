"""The answer composer over whole articles (nodes/support/compose.py), on articles written in each common layout."""

import pytest

from core.records import RetrievedChunk
from core.roles import section_role
from nodes.support.compose import article_sections, choose_target, question_type, rank_articles, render, target_steps


def article(doc_id: str, title: str, parts: list[tuple[str, str]]) -> list[RetrievedChunk]:
    """Chunks of one article: (heading path joined by ' > ', body) in document order."""
    chunks = []
    for index, (section, text) in enumerate(parts):
        path = section.split(" > ") if section else []
        chunks.append(
            RetrievedChunk(
                chunk_id=f"{doc_id}-{index}",
                doc_id=doc_id,
                title=title,
                source=f"kb/{doc_id}.md",
                section=section,
                os="",
                chunk_index=index,
                text=text,
                score=0.0,
                role=section_role(path, text.splitlines()),
            )
        )
    return chunks


def hit(chunks: list[RetrievedChunk], section: str, score: float) -> RetrievedChunk:
    chunk = next(c for c in chunks if c["section"] == section)
    return {**chunk, "score": score}


SYMPTOMS_CAUSE_RESOLUTION = article(
    "cal",
    "Calendar shows a red warning for one person",
    [
        ("Symptoms", "When you open a colleague's calendar, you see a red triangle instead of their free/busy times."),
        ("Cause", "The calendar has more than 1,000 items in one time slot."),
        (
            "Resolution",
            "To fix this, ask the calendar's owner to:\n1. Open the calendar in list view.\n"
            "2. Sort by start time.\n3. Delete the duplicate items in the busy slot.\n"
            "  ```\n  Get-CalendarDiagnosticLog -Identity owner\n  ```\n4. Wait ten minutes and look again.",
        ),
        ("More information", "1. Turn on logging.\n2. Read the log for ResultSetTooBig."),
    ],
)

METHODS = article(
    "spell",
    "Spell check does nothing in one document",
    [
        ("Symptoms", "Misspelled words are not underlined and the check says it is complete."),
        ("Resolution", "Try these methods in order."),
        ("Resolution > Method 1: Install the proofing tools", "1. Open Add or remove programs.\n2. Modify Office."),
        (
            "Resolution > Method 2: Clear 'Do not check spelling'",
            "1. Select all text.\n2. Open Language.\n3. Clear 'Do not check spelling or grammar'.",
        ),
        ("Resolution > Method 3: Reset the registry key", "1. Open the registry editor.\n2. Delete the Proofing key."),
    ],
)

SIBLING_OPTIONS = article(
    "blank",
    "A workbook opens as a grey window",
    [
        ("Symptoms", "Double-clicking a workbook opens Excel with a blank grey window."),
        ("Resolution", "Try the options below in the order given."),
        ("Option 1: Unhide the window", "1. Select View.\n2. Select Unhide."),
        (
            "Option 2: Ignore other applications",
            "1. Open File > Options > Advanced.\n2. Clear 'Ignore other applications that use DDE'.",
        ),
    ],
)

KCS = article(
    "kcs",
    "VPN drops every 20 minutes",
    [
        ("Issue", "The VPN disconnects every 20 minutes while working from home."),
        ("Environment", "Windows 11, VPN client 5.1"),
        ("Resolution", "1. Open the VPN client settings.\n2. Turn off 'Disconnect on idle'.\n3. Reconnect."),
        ("Cause", "An idle timeout in the client profile."),
    ],
)

HOW_TO = article(
    "merge",
    "Combining documents",
    [
        ("", "You can combine several documents into one."),
        (
            "Insert documents into one file",
            "1. Open the first document.\n2. Select Insert > Object > Text from "
            "File.\n3. Choose the other files.\n  ```powershell\n  Get-ChildItem *.docx\n"
            "  ```\n4. Save.",
        ),
        ("See also", "Compare two documents."),
    ],
)


def test_a_problem_described_gets_the_resolution_not_the_symptoms_it_matched():
    hits = [hit(SYMPTOMS_CAUSE_RESOLUTION, "Symptoms", 0.6)]
    target = choose_target(
        article_sections(SYMPTOMS_CAUSE_RESOLUTION), hits, "fix", "i see a red triangle on my boss's calendar"
    )
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


def test_a_why_question_gets_the_section_that_explains_the_behaviour_though_it_ends_in_steps_to_change_it():
    page = article(
        "digest",
        "Message digests",
        [
            ("Login alerts", "We send an alert whenever you log in from a new browser."),
            (
                "Digests > Waiting before sending a digest",
                "Digests wait a few minutes after a message arrives, so that a message you read meanwhile is left "
                "out.\n1. Open Settings > Digests.\n2. Choose how long to wait before sending.",
            ),
            ("Digests > Digest language", "1. Open Settings > Digests.\n2. Pick a language."),
        ],
    )
    hits = [hit(page, "Login alerts", 0.5), hit(page, "Digests > Waiting before sending a digest", 0.45)]
    query = "why do my digests arrive minutes after the message? the waiting is annoying"
    target = choose_target(article_sections(page), hits, "why", query)
    assert target.sections[0].role == "procedure"  # by its shape: two steps at its end
    assert [s.name for s in target.sections] == ["Digests > Waiting before sending a digest"]


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


@pytest.mark.parametrize(
    "text, expected",
    [
        ("outlook keeps asking for my password", "fix"),
        ("i cant see my boss's free/busy, her calendar shows a red triangle", "fix"),
        ("how do i fix the red triangle on the calendar", "fix"),
        ("how do I merge two word files into one", "how-to"),
        ("is there a proper way to combine 6 documents", "how-to"),
        ("why does my mailbox say it is full", "why"),
        ("track changes is greyed out in the legal doc. why??", "why"),
        ("where do i download the excel viewer", "where"),
        ("what is the Files folder in a mailbox", "what-is"),
        ("i want outlook to show my calendar in the week view", "how-to"),
        ("want the chat app to alert me whenever someone writes 'outage', even in channels i never read", "how-to"),
        ("i want my laptop to stop crashing every morning", "fix"),
    ],
)
def test_question_types(text, expected):
    assert question_type(text) == expected


def test_a_numbered_list_indented_under_a_paragraph_is_steps_too():
    chunks = article(
        "doc",
        "Find the missing parameter",
        [
            (
                "Resolution",
                "In older versions:\n  1. Open the Documenter.\n  2. Export the report as text.\n"
                "In newer versions:\n1. Open Visual Basic.\n   Note: it opens in a new window.\n2. Select References.",
            )
        ],
    )
    target = choose_target(article_sections(chunks), [hit(chunks, "Resolution", 0.8)], "fix", "parameter")
    steps = target_steps(target)
    assert [s.splitlines()[0] for s in steps] == [
        "In older versions: Open the Documenter.",
        "Export the report as text.",
        "In newer versions: Open Visual Basic.",
        "Select References.",
    ]
    assert "it opens in a new window" in steps[2]


MANUAL_PAGE = article(
    "mail",
    "Using the mail app",
    [
        ("", "The mail app shows your mailboxes in the browser."),
        ("Compose messages", "1. Click New message.\n2. Write the message.\n3. Click Send."),
        ("Compose messages > Minimize the composer", "1. Click the minimise button.\n2. Open it again from the list."),
        (
            "Outbox",
            "Messages that could not be sent stay in the outbox. They are retried every few minutes; "
            "a message in the outbox has not been delivered to anyone yet.",
        ),
        ("Folders > Add a folder", "1. Click the folder menu.\n2. Choose Add folder."),
    ],
)

SETUP_AND_TROUBLESHOOTING = article(
    "net",
    "Connecting to the office network",
    [
        ("", "Every office has a staff network and a guest network."),
        ("Guest network", "1. Join the guest network in the office.\n2. Enter the day's access code."),
        (
            "Troubleshooting the network",
            "1. Turn the wireless off and on again.\n2. Restart the laptop.\n3. Move to another floor.",
        ),
    ],
)


def test_a_manual_section_whose_heading_names_the_asked_thing_answers_though_it_has_no_steps():
    hits = [hit(MANUAL_PAGE, "Compose messages > Minimize the composer", 0.3), hit(MANUAL_PAGE, "Outbox", 0.3)]
    target = choose_target(
        article_sections(MANUAL_PAGE), hits, "fix", "my email is stuck in the outbox, did it go out or not?"
    )
    assert [s.name for s in target.sections] == ["Outbox"]


def test_a_problem_described_gets_the_troubleshooting_not_a_set_up_procedure_sharing_its_words():
    hits = [
        hit(SETUP_AND_TROUBLESHOOTING, "Guest network", 0.45),
        hit(SETUP_AND_TROUBLESHOOTING, "Troubleshooting the network", 0.4),
    ]
    target = choose_target(
        article_sections(SETUP_AND_TROUBLESHOOTING), hits, "fix", "the network keeps dropping in the office"
    )
    assert [s.name for s in target.sections] == ["Troubleshooting the network"]


def test_a_plain_section_the_search_found_is_answered_with_the_steps_under_it_not_the_articles_first():
    page = article(
        "status",
        "Status and availability",
        [
            ("Statuses > Set a status", "1. Click your name.\n2. Choose Set a status."),
            ("Availability", "You can appear offline to others while you keep working."),
            ("Availability > Toggle invisible mode", "1. Click your name.\n2. Choose Go invisible."),
        ],
    )
    hits = [hit(page, "Availability", 0.3)]
    target = choose_target(article_sections(page), hits, "how-to", "make it look like I'm away")
    names = [s.name for s in target.sections]
    assert "Availability > Toggle invisible mode" in names and "Statuses > Set a status" not in names


def test_a_symptom_line_that_shares_nothing_with_the_question_is_not_shown_as_a_match():
    page = article(
        "sync",
        "Sync errors",
        [
            ("Symptoms", "Resource temporarily unavailable"),
            ("Resolution", "1. Quit the client.\n2. Start it again."),
        ],
    )
    target = choose_target(article_sections(page), [hit(page, "Symptoms", 0.5)], "fix", "my calendar will not sync")
    assert target.matches == "" and [s.name for s in target.sections] == ["Resolution"]


@pytest.mark.parametrize("question", ["how long do deleted files stay in the trash?", "how many people fit in a call?"])
def test_a_question_of_quantity_asks_for_a_fact_not_steps(question):
    assert question_type(question) == "what-is"


def test_a_pages_lead_found_first_still_sends_a_problem_on_to_the_resolution():
    page = article(
        "merge",
        "Numbers lose their format in a mail merge",
        [
            ("", "When you merge from a workbook, percentages and postal codes lose their format."),
            ("Cause", "The merge reads the stored value, not the displayed one."),
            ("Resolution", "1. Open the workbook.\n2. Format the column as text.\n3. Run the merge again."),
        ],
    )
    hits = [hit(page, "", 0.6), hit(page, "Resolution", 0.4)]
    target = choose_target(article_sections(page), hits, "fix", "postal codes lose their leading zero in a merge")
    assert [s.name for s in target.sections] == ["Resolution"]


def test_the_match_line_quotes_a_links_words_without_its_address():
    page = article(
        "mention",
        "Mentions do not notify",
        [
            (
                "Symptoms",
                "When you @mention someone (https://example.com/help/mentions#ID0E) in a comment, no mail is sent.",
            ),
            ("Resolution", "1. Open the file again.\n2. Mention them once more."),
        ],
    )
    target = choose_target(
        article_sections(page), [hit(page, "Symptoms", 0.5)], "fix", "no mail when I mention someone"
    )
    assert target.matches == "When you @mention someone in a comment, no mail is sent."


def test_a_symptom_line_that_introduces_an_error_message_carries_the_message_not_a_dangling_colon():
    page = article(
        "work-file",
        "Work file errors",
        [
            (
                "Symptoms",
                "When you try to save a document, the editor returns the following error message:\n\n"
                "Could not create the work file. Check the temp environment variable.",
            ),
            ("Resolution", "1. Open System settings.\n2. Add the TEMP variable.\n3. Restart the editor."),
        ],
    )
    question = "editor says could not create the work file when i save"
    target = choose_target(article_sections(page), [hit(page, "Symptoms", 0.5)], "fix", question)
    assert target.matches.startswith("When you try to save a document")
    assert target.matches.endswith("Could not create the work file. Check the temp environment variable.")


def _with_readers(chunks: list[RetrievedChunk], admin: set[str]) -> list[RetrievedChunk]:
    return [{**c, "reader": "admin" if c["section"] in admin else "user"} for c in chunks]  # type: ignore[misc]


FONT_PER_APP = _with_readers(
    article(
        "fonts",
        "Change the default font",
        [
            ("Set the default font for Word", "1. Open the Home tab.\n2. Pick the font and select Set As Default."),
            (
                "Set the default font for Excel",
                "1. Open the Group Policy editor.\n2. Set the standard font policy for the spreadsheet app.",
            ),
        ],
    ),
    admin={"Set the default font for Excel"},
)


def test_the_it_teams_steps_for_the_very_thing_asked_beat_an_employees_steps_for_another_thing():
    hits = [
        hit(FONT_PER_APP, "Set the default font for Word", 0.3),
        hit(FONT_PER_APP, "Set the default font for Excel", 0.3),
    ]
    target = choose_target(article_sections(FONT_PER_APP), hits, "fix", "make excel use arial as its default font")
    assert [s.name for s in target.sections] == ["Set the default font for Excel"] and target.admin_only


def test_an_employees_way_is_still_preferred_when_the_it_teams_fits_the_question_no_better():
    hits = [
        hit(FONT_PER_APP, "Set the default font for Word", 0.3),
        hit(FONT_PER_APP, "Set the default font for Excel", 0.3),
    ]
    target = choose_target(article_sections(FONT_PER_APP), hits, "how-to", "how do i set a default font")
    assert [s.name for s in target.sections] == ["Set the default font for Word"]


def test_an_it_team_explanation_never_outweighs_the_employees_section_for_a_why_question():
    page = _with_readers(
        article(
            "oof",
            "Automatic replies",
            [
                ("What are automatic replies?", "Automatic replies are rules the mail server runs for a mailbox."),
                ("Reply history", "Each sender gets the automatic reply once while it is on."),
            ],
        ),
        admin={"What are automatic replies?"},
    )
    hits = [hit(page, "What are automatic replies?", 0.4), hit(page, "Reply history", 0.25)]
    target = choose_target(article_sections(page), hits, "why", "why did my automatic reply go out only once?")
    assert [s.name for s in target.sections] == ["Reply history"]


KNOWN_PROBLEMS = article(
    "share",
    "Opening the team share from a laptop",
    [
        ("Mapping the share", "1. Open the file manager.\n2. Choose Map network drive.\n3. Enter the share address."),
        ("Known problems > Problem", "The mapped drive is very slow or times out."),
        ("Known problems > Solution", "1. Create an app password.\n2. Sign in with the app password."),
        ("Known problems > Problem", "Copying fails with error 0x80070057: the path is too long."),
        ("Known problems > Solution 1", "Move the file to a folder with a shorter name."),
        ("Known problems > Solution 2", "Turn on long paths:\n1. Open Settings.\n2. Turn on Long paths."),
        ("Known problems > Problem", "The certificate is not trusted when you map the drive."),
        ("Known problems > Solution", "1. Open the certificate.\n2. Import it into Trusted Root.\n3. Map again."),
    ],
)


def test_a_known_problems_list_answers_with_the_solution_of_the_problem_asked_not_anothers():
    # the search found the problem statement asked about, and (a little better) another problem's solution
    statement = next(c for c in KNOWN_PROBLEMS if "0x80070057" in c["text"])
    hits = [hit(KNOWN_PROBLEMS, "Known problems > Solution", 0.62), {**statement, "score": 0.6}]
    question = "copying to the mapped drive fails with error 0x80070057 the path is too long"
    target = choose_target(article_sections(KNOWN_PROBLEMS), hits, "fix", question)
    body, _ = render(target)
    assert "shorter name" in body and "certificate" not in body and "app password" not in body
    assert target.alternatives == ["Solution 2"]  # the other way for the same problem, named
    assert "0x80070057" in target.matches  # the problem statement it answers, as "This matches"


def test_a_walkthrough_from_a_known_problems_list_never_takes_another_problems_steps():
    question = "the certificate is not trusted when I map the drive"
    target = choose_target(article_sections(KNOWN_PROBLEMS), [], "fix", question)
    assert target_steps(target) == ["Open the certificate.", "Import it into Trusted Root.", "Map again."]


def test_each_of_several_labelled_lists_says_which_it_is_in_its_first_step():
    chunks = article(
        "notify",
        "Notifications",
        [
            (
                "Check browser settings",
                "Chrome\n1. Open Settings.\n2. Allow notifications.\nFirefox\n1. Open Preferences.",
            )
        ],
    )
    target = choose_target(article_sections(chunks), [], "fix", "notifications are blocked in the browser")
    assert target_steps(target) == ["Chrome: Open Settings.", "Allow notifications.", "Firefox: Open Preferences."]


TABBED = article(
    "alerts",
    "Desktop alerts",
    [
        (
            "Check your settings",
            "Before you start, sign in.\n1. Open the app.\nChrome\n1. Click the lock icon.\n2. Allow alerts.\n"
            "Alternate instructions:\n1. Open Chrome's menu.\n2. Choose Privacy.\nFirefox\n1. Open Preferences.\n"
            "2. Allow alerts.\nDesktop app\n1. Open the gear menu.\n2. Turn on alerts.\nMobile\n"
            "1. Tap your avatar.\n2. Tap Alerts.",
        )
    ],
)


@pytest.mark.parametrize(
    ("message", "user_os", "label", "first", "last"),
    [
        ("no desktop alerts in chrome at all", None, "Chrome", "Click the lock icon.", "Alternate instructions"),
        ("desktop alerts never show on my android phone", None, "Mobile", "Tap your avatar.", "Tap Alerts."),
        ("desktop alerts are silent in firefox", "windows", "Firefox", "Open Preferences.", "Allow alerts."),
    ],
)
def test_a_walkthrough_takes_the_list_for_the_browser_or_device_the_message_names(message, user_os, label, first, last):
    from nodes.support.compose import steps_for

    target = choose_target(article_sections(TABBED), [], "fix", message)
    steps, chosen, others = steps_for(target, message, user_os)
    assert chosen == label and label not in others and len(others) == 3
    assert all(walked[0] == "Open the app." for walked in others.values())  # each the list it would walk
    assert steps[0] == "Open the app." and steps[1] == first  # the steps before the lists, then the list's own
    assert last in steps[-1] if label != "Chrome" else steps[-2].startswith(last)  # another way within its list


def test_every_list_is_walked_when_the_message_names_several():
    from nodes.support.compose import steps_for

    message = "alerts fail in chrome and on my phone"
    target = choose_target(article_sections(TABBED), [], "fix", message)
    steps, chosen, others = steps_for(target, message)
    assert (steps, chosen, others) == (target_steps(target), "", {})
    assert len(steps) == 11


def test_the_articles_first_list_is_walked_and_the_others_named_when_the_message_names_none():
    from nodes.support.compose import steps_for

    message = "desktop alerts never show"  # no list named ("desktop" is the article's own topic)
    target = choose_target(article_sections(TABBED), [], "fix", message)
    steps, chosen, others = steps_for(target, message)
    assert chosen == "Chrome" and list(others) == ["Firefox", "Desktop app", "Mobile"]
    assert steps[:2] == ["Open the app.", "Click the lock icon."] and len(steps) == 5  # its other way stays in it


@pytest.mark.parametrize(
    ("labels", "ways"),
    [
        (["System proxy settings", "Custom proxy settings"], True),
        (["Via the compose box", "Via message actions"], True),
        (["Chrome", "Firefox"], False),
        (["Desktop app › Windows", "Mobile"], False),
        (["macOS", "Linux"], False),
    ],
)
def test_lists_labelled_with_no_device_or_browser_are_ways_to_the_same_end(labels, ways):
    from nodes.support.compose import are_ways

    assert are_ways(labels) is ways


def test_every_list_is_walked_when_two_lists_share_a_label():
    from nodes.support.compose import steps_for

    page = article(
        "twice",
        "Alerts",
        [
            (
                "Turn alerts on",
                "Mobile\n1. Tap Settings.\n2. Tap Alerts.\nDesktop\n1. Click Settings.\nMobile\n1. Ask IT.",
            )
        ],
    )
    target = choose_target(article_sections(page), [], "fix", "alerts are off on my phone")
    assert steps_for(target, "alerts are off on my phone") == (target_steps(target), "", {})
    assert len(target_steps(target)) == 4


def test_a_section_on_what_comes_before_does_not_answer_the_situation_it_prepares_for():
    chunks = article(
        "start",
        "Starting at the company",
        [
            ("Before your first day", "Your manager requests your accounts. You receive a welcome e-mail."),
            ("Your first morning", "1. Collect your laptop.\n2. Sign in with your temporary password."),
            ("Your first week", "1. Test the VPN from home.\n2. Finish your training."),
        ],
    )
    target = choose_target(article_sections(chunks), [], "fix", "it's my first day")
    assert [s.name for s in target.sections] == ["Your first morning"]


def test_how_do_i_with_a_verb_gets_the_section_headed_with_that_verb_not_one_that_merely_shares_words():
    chunks = article(
        "phish",
        "Suspicious e-mails",
        [
            ("Signs of a phishing email", "Urgency and look-alike links in an email. Report them as phishing."),
            ("Report a suspicious message", "1. Select the message.\n2. Select Report > Phishing."),
            ("What happens after you report", "The security team reviews every phishing email you report."),
        ],
    )
    question = "I got a strange email that looks like phishing, how do I report it?"
    target = choose_target(article_sections(chunks), [], "how-to", question)
    assert [s.name for s in target.sections] == ["Report a suspicious message"]


FILE_APPS = article(
    "apps",
    "Connecting apps to the file server",
    [
        ("Desktop app", "Sign in to the desktop app with the server's normal web address."),
        (
            "Other file apps",
            "Apps from other vendors connect to a longer address:\n\n    https://files.example.com/dav/USERNAME/\n\n"
            "Sign in with an app password.",
        ),
        ("Known problems > Problem", "Uploads stop after a few minutes."),
        ("Known problems > Solution", "1. Open Settings.\n2. Turn off battery saver.\n3. Try the upload again."),
        ("Known problems > Problem", "The app shows a certificate warning."),
        ("Known problems > Solution", "1. Open the certificate.\n2. Trust it."),
    ],
)


def test_a_solution_to_another_known_problem_does_not_outrank_the_section_that_answers_for_being_a_solution():
    question = "which address do I enter in my file app? the normal web address doesnt work"
    hits = [hit(FILE_APPS, "Other file apps", 0.36), hit(FILE_APPS, "Known problems > Solution", 0.33)]
    target = choose_target(article_sections(FILE_APPS), hits, "fix", question)
    assert [s.name for s in target.sections] == ["Other file apps"]


def test_a_headed_section_that_fits_as_well_as_the_page_lead_answers_a_question_of_fact():
    chunks = article(
        "trash",
        "Deleted files",
        [
            ("", "Deleted files are kept in the trash for 30 days, then removed for good."),
            ("Restoring a file", "1. Open the trash.\n2. Select the file.\n3. Select Restore."),
            ("Retention", "Deleted files are kept in the trash for 30 days unless it is full."),
        ],
    )
    hits = [hit(chunks, "", 0.41), hit(chunks, "Retention", 0.41)]
    target = choose_target(article_sections(chunks), hits, "what-is", "how long are deleted files kept in the trash?")
    assert [s.name for s in target.sections] == ["Retention"]


def test_a_retirement_notice_stops_before_a_sentence_that_only_introduces_a_list():
    from nodes.support.compose import retirement_notice

    page = article(
        "viewer",
        "Plan Viewer",
        [
            (
                "Notice",
                "The Plan Viewer was retired in May 2024. It is no longer available for download. "
                "To keep viewing plans, go to the store for your device:\n- App Store\n- Google Play",
            )
        ],
    )
    notice = retirement_notice(article_sections(page))
    assert notice == "The Plan Viewer was retired in May 2024. It is no longer available for download."


def _with_os(chunks: list[RetrievedChunk]) -> list[RetrievedChunk]:
    from core.lexicon import detect_os_in_path

    return [{**c, "os": detect_os_in_path(c["section"].split(" > ")) or ""} for c in chunks]


# a page whose tabs (one per OS) hold headings of their own: each tab is a heading level of its own
TABBED_INSTALL = _with_os(
    article(
        "inst",
        "Install the desktop app",
        [
            ("Install the latest release > macOS > Disk image", "1. Download the disk image.\n2. Drag the app."),
            ("Install the latest release > macOS > Homebrew", "1. Run brew install.\n2. Open the app."),
            ("Install the latest release > Windows > Web installer", "1. Run the installer.\n2. Open it from Start."),
            ("Install the latest release > Windows > Offline installer", "1. Copy the msi.\n2. Run the msi."),
            ("Install the latest release > Linux > APT", "1. Run apt install.\n2. Open it."),
            ("Remove the app", "macOS\n1. Drag the app to the Trash.\nWindows\n1. Uninstall it in Settings."),
        ],
    )
)


def test_a_part_per_os_is_narrowed_to_one_os_when_the_employee_named_none():
    hits = [hit(TABBED_INSTALL, "Install the latest release > Windows > Web installer", 0.6)]
    target = choose_target(article_sections(TABBED_INSTALL), hits, "how-to", "how do I install the desktop app")
    assert [s.name for s in target.sections] == [
        "Install the latest release > Windows > Web installer",
        "Install the latest release > Windows > Offline installer",
    ]
    # the ways within that OS name their steps; no other OS's step is walked
    assert target_steps(target) == [
        "Web installer: Run the installer.",
        "Open it from Start.",
        "Offline installer: Copy the msi.",
        "Run the msi.",
    ]


def test_a_section_under_the_heading_that_names_the_asked_action_beats_one_headed_with_another_action():
    # "Remove the app" shares "app" with the question; "Install … > Windows > Web installer" installs
    windows = [c for c in TABBED_INSTALL if c["os"] in ("", "windows")]
    hits = [
        hit(windows, "Install the latest release > Windows > Web installer", 0.5),
        hit(windows, "Remove the app", 0.48),
    ]
    target = choose_target(article_sections(windows), hits, "how-to", "how do I install the app on windows")
    assert target.sections[0].name == "Install the latest release > Windows > Web installer"


def test_asking_when_or_what_to_do_is_told_from_a_circumstance():
    from nodes.support.compose import _ASKS_WHEN, _WHAT_TO_DO

    for asks in ("when is the service desk open?", "What time does the backup run", "opening hours of the IT bar"):
        assert _ASKS_WHEN.search(asks)
    for circumstance in ("when I click edit the browser says failed", "the file won't open at all"):
        assert not _ASKS_WHEN.search(circumstance)
    assert _WHAT_TO_DO.search("I got a phishing mail, what do I do?")
    assert not _WHAT_TO_DO.search("what does this error mean")
