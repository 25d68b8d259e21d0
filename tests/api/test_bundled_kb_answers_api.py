"""Everyday questions on the bundled sample knowledge base (kb/), through POST /chat of the real app: real MiniLM,
real Chroma, SQLite tickets. Each question is answered from the section that holds the answer, in a conversation."""

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from tests.api.conversation import Chat

pytestmark = pytest.mark.slow
BUNDLED_KB = Path(__file__).resolve().parents[2] / "kb"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    settings = Settings(_env_file=None, data_dir=tmp_path_factory.mktemp("data"), kb_dir=BUNDLED_KB)
    with TestClient(create_app(settings), base_url="http://localhost") as test_client:
        yield test_client


def cited(reply):
    return (reply["sources"][0]["source"], reply["sources"][0]["section"]) if reply["sources"] else None


def test_wifi_dropping_in_the_office_gets_the_wifi_troubleshooting_not_the_vpn(client):
    assert cited(Chat(client).say("my wifi keeps dropping out in the office")) == (
        "kb/wifi.html",
        "Troubleshooting Wi-Fi",
    )


def test_mfa_on_a_new_phone_gets_the_enrolments_new_phone_steps(client):
    reply = Chat(client).say("how do I get MFA working on my new phone?")
    assert cited(reply) == ("kb/mfa-enrolment.md", "Moving to a new phone")


def test_reporting_a_phishing_mail_is_never_asked_did_that_fix_it(client):
    reply = Chat(client).say("I got a strange email that looks like phishing, how do I report it?")
    assert cited(reply)[0] == "kb/reporting-phishing.html" and "Did that fix it?" not in reply["answer"]


def test_having_clicked_a_phishing_link_gets_every_urgent_step_at_once(client):
    reply = Chat(client).say("I clicked a link in a weird email and entered my password")
    assert cited(reply) == (
        "kb/reporting-phishing.html",
        "If you clicked a link, opened an attachment or entered your password",
    )
    assert reply["action"] == "answer" and "Did that fix it?" not in reply["answer"]
    assert "1. Stop." in reply["answer"] and "6. Report the message" in reply["answer"]


def test_setting_up_outlook_on_a_mac_gets_the_macos_steps_not_the_need_help_pointer(client):
    reply = Chat(client).say("set up outlook on my mac")
    assert cited(reply) == ("kb/outlook-email-setup.txt", "macOS")


def test_company_email_on_a_laptop_is_not_answered_with_the_phone_section(client):
    reply = Chat(client).say("how do I get company email on my personal laptop")
    assert cited(reply)[0] == "kb/outlook-email-setup.txt" and cited(reply)[1] in ("Windows", "macOS", "Linux")


def test_a_unc_path_keeps_both_leading_backslashes(client):
    reply = Chat(client).say("how do I map the department share on Windows?")
    assert "\\\\files.brightwave.example\\departments" in reply["answer"]


def test_software_to_install_gets_the_request_procedure_with_the_request_offered_beside_it(client):
    reply = Chat(client).say("I need Adobe Acrobat Pro installed")
    assert cited(reply) == ("kb/software-requests.md", "Request software that is not in the catalogue")
    assert reply["ticket_event"] == "offered" and "open a request" in reply["answer"]


def test_a_mac_named_after_an_outlook_answer_keeps_the_outlook_topic(client):
    chat = Chat(client)
    chat.say("Outlook keeps asking for my password")
    reply = chat.say("and on my mac?")
    assert reply["user_os"] == "macos" and cited(reply)[0] == "kb/outlook-password-prompts.md"


def test_a_first_day_gets_the_first_morning_steps_not_the_first_week(client):
    reply = Chat(client).say("it's my first day")
    assert cited(reply) == ("kb/new-starter-onboarding.pdf", "Your first morning")
    assert "Collect your laptop" in reply["answer"]


def test_asking_how_to_report_a_phishing_mail_gets_the_reporting_steps_not_the_signs_of_phishing(client):
    reply = Chat(client).say("I got a strange email that looks like phishing, how do I report it?")
    assert cited(reply) == ("kb/reporting-phishing.html", "Report a suspicious message in Outlook")
    assert "Choose Report phishing" in reply["answer"]


def test_what_to_do_about_a_phishing_mail_gets_the_reporting_steps_not_the_note_on_simulations(client):
    reply = Chat(client).say("I got a phishing mail, what do I do?")
    assert cited(reply) == ("kb/reporting-phishing.html", "Report a suspicious message in Outlook")
    assert "Choose Report phishing" in reply["answer"]
    assert "If you do not see the Report button" in reply["answer"]  # the fallback comes with the main steps


def test_where_a_share_is_gets_the_table_of_shares_not_one_platforms_mount_command(client):
    reply = Chat(client).say("where is the departments share?")
    assert cited(reply)[0] == "kb/shared-drives.md" and "mount.cifs" not in reply["answer"]
    assert r"\\files.brightwave.example\departments" in reply["answer"]


def test_how_to_connect_to_the_vpn_gets_the_setup_guide_first_platform_not_the_troubleshooting(client):
    chat = Chat(client)
    reply = chat.say("how do I connect to the vpn")
    assert cited(reply) == ("kb/vpn-setup.md", "Windows")
    assert "If you're on Linux or macOS, tell me." in reply["answer"]
    assert cited(chat.say("I'm on a mac")) == ("kb/vpn-setup.md", "macOS")


def test_how_to_contact_it_is_answered_from_the_contact_page_not_asked_which_app(client):
    reply = Chat(client).say("how do I contact IT")
    assert cited(reply) == ("kb/contact-it-service-desk.pdf", "How to contact the service desk")
    assert "ext. 4357" in reply["answer"]


def test_when_the_service_desk_is_open_gets_its_hours(client):
    reply = Chat(client).say("when is the service desk open")
    assert cited(reply) == ("kb/contact-it-service-desk.pdf", "Service desk hours")
    assert "07:30 to 19:00" in reply["answer"]
