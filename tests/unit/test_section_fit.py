"""How well each section of one article covers a question (nodes/support/section_fit.py)."""

from nodes.support.section_fit import SectionText, fit, question_terms

FONTS = [
    SectionText(["Set the default font for Word"], "Open Word. Word, Excel and PowerPoint each keep their own font."),
    SectionText(["Set the default font for Excel"], "Open Excel. Word, Excel and PowerPoint each keep their own font."),
    SectionText(["Set the default font for PowerPoint"], "Word, Excel and PowerPoint each keep their own font."),
]


def test_the_section_whose_heading_names_the_questions_rarest_word_fits_best():
    scores = fit(FONTS, "make excel default to arial 10 for everyone")
    assert scores.index(max(scores)) == 1 and scores[1] > scores[0]


def test_a_word_in_the_own_heading_counts_more_than_the_same_word_only_in_the_body():
    sections = [
        SectionText(["Outbox"], "Messages wait here."),
        SectionText(["Compose"], "A message you send goes to the outbox first."),
    ]
    first, second = fit(sections, "my mail is stuck in the outbox")
    assert first > second > 0


def test_a_word_the_article_never_uses_leaves_every_section_at_zero():
    assert fit(FONTS, "the printer jams") == [0.0, 0.0, 0.0]


def test_a_hyphenated_word_counts_once_joined():
    assert question_terms("wi-fi keeps dropping") == question_terms("wifi keeps dropping")


def test_a_question_in_the_past_tense_names_the_situation_a_heading_puts_in_the_present():
    sections = [
        SectionText(["Configuring two-factor authentication"], "Open your security settings and scan the code."),
        SectionText(["Recovery codes if you lose your second factor"], "Keep these codes somewhere safe."),
        SectionText(["Logging in with two-factor authentication"], "Enter the code your app shows."),
    ]
    scores = fit(sections, "lost my phone with the authenticator app, it keeps asking for the code")
    assert scores.index(max(scores)) == 1
    assert question_terms("forgot my password") == question_terms("forget my password")


ONBOARDING = [
    SectionText(["Your first morning"], "Collect your laptop and badge at the front desk."),
    SectionText(["Your first week"], "Test the VPN from home before you need it."),
    SectionText(["Getting help"], "Call the service desk."),
]


def test_a_part_of_a_day_in_a_heading_is_the_day_the_question_names():
    morning, week, _ = fit(ONBOARDING, "it's my first day")
    assert morning > week


def test_what_the_employee_needs_to_do_is_the_asking_not_a_topic_word():
    morning, week, _ = fit(ONBOARDING, "it's my first day, what do I need to do?")
    assert morning > week and "need" not in question_terms("what do I need to do")


SYNC_CLIENT = [
    SectionText(["Installing the client"], "Download the client and run the installer."),
    SectionText(["Update checks"], "The client looks for updates at every start."),
    SectionText(["Preventing automatic updates"], "Set skipUpdateCheck in the configuration file."),
    SectionText(["Deleting a synced folder"], "Remove the folder from the client's folder list."),
    SectionText(["Restoring deleted files"], "Open the trash bin and choose the file."),
]


def test_an_action_asked_in_the_employees_words_fits_the_section_headed_with_the_pages_word_for_it():
    scores = fit(SYNC_CLIENT, "how do I make the client stop nagging about a new version, we update it ourselves")
    assert scores.index(max(scores)) == 2
    scores = fit(SYNC_CLIENT, "I deleted a synced file by mistake, can I get it back?")
    assert scores.index(max(scores)) == 4


def test_a_fault_or_a_thing_deleted_named_in_the_past_brings_no_action_words():
    assert fit(SYNC_CLIENT, "the update checks stopped") == fit(SYNC_CLIENT, "the update checks")
    deleted = fit(SYNC_CLIENT, "how long are deleted files kept in the trash bin")
    assert deleted.index(max(deleted)) == 4


def test_a_wish_to_undo_an_action_fits_the_section_that_reverses_it_not_the_one_that_does_it():
    events = [
        SectionText(["Events", "Edit, copy or delete an event"], "Click the event. To delete it, choose Delete."),
        SectionText(
            ["Recycle bin"], "Deleted events are kept in a recycle bin for 30 days, so a deletion can be undone."
        ),
    ]
    scores = fit(events, "I accidentally deleted the weekly meeting series, any way to get it back?")
    assert scores[1] > scores[0] == 0.0
    deleting = fit(events, "how do I delete a meeting series")  # asked to delete: the section that does it
    assert deleting[0] > deleting[1]
