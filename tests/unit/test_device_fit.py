"""A question about a phone or tablet, and an article written for computers only (nodes/support/device_fit.py)."""

from __future__ import annotations

import pytest

from nodes.support.device_fit import asks_for_mobile, for_computers_only


@pytest.mark.parametrize(
    ("message", "mobile"),
    [
        ("how do I map the shared drive on my iphone", True),
        ("the VPN won't connect on my Android", True),
        ("can I get my mail on my phone?", True),
        ("calendar does not sync to the work tablet", True),
        ("how do I change my phone number for sign-in", False),  # a phone number, not the device
        ("set up mail on my phone and my laptop", False),  # a computer too
        ("outlook on my macbook keeps crashing", False),
        ("printer jammed on floor 3", False),
    ],
)
def test_a_question_asks_about_a_phone_or_tablet_only_when_it_names_one_and_no_computer(message, mobile):
    assert asks_for_mobile(message) is mobile


def chunk(text: str, os: str = "", section: str = "") -> dict:
    return {"text": text, "os": os, "section": section}


def test_an_article_with_steps_for_desktop_systems_and_no_word_of_a_phone_is_for_computers_only():
    steps = [chunk("1. Open File Explorer.", "windows"), chunk("1. Open Finder.", "macos")]
    assert for_computers_only("Mapping network drives", steps)
    assert for_computers_only("Desktop alerts", [chunk("1. Open Settings.")])  # its title says so


def test_an_article_that_speaks_of_a_phone_anywhere_or_is_for_no_computer_in_particular_is_not():
    assert not for_computers_only(
        "Mapping network drives", [chunk("1. Open Finder.", "macos"), chunk("On a phone, use the Files app.")]
    )
    assert not for_computers_only("Desktop alerts", [chunk("Mobile devices get push alerts instead.")])
    assert not for_computers_only("Reset your password", [chunk("1. Open the portal.")])  # no computer named


def test_a_list_of_related_articles_does_not_make_an_article_speak_of_phones():
    steps = [chunk("1. Open Settings.", "windows"), chunk("- Mobile alerts", section="Alerts > Related articles")]
    assert for_computers_only("Desktop alerts", steps)


@pytest.mark.parametrize(
    ("message", "computer"),
    [
        ("how do I read work mail on my laptop", True),
        ("enrol my home pc in the device portal", True),
        ("outlook on my macbook keeps crashing", True),
        ("set up mail on my phone and my laptop", False),  # a phone too
        ("printer jammed on floor 3", False),
    ],
)
def test_a_question_asks_about_a_computer_only_when_it_names_one_and_no_phone(message, computer):
    from nodes.support.device_fit import asks_for_computer

    assert asks_for_computer(message) is computer


def test_an_article_titled_for_phones_that_names_no_computer_is_for_phones_only():
    from nodes.support.device_fit import for_another_device, for_mobile_only

    phone = [chunk("1. Install the mail app from the App Store or Google Play.")]
    assert for_mobile_only("Work mail on your phone", phone)
    assert not for_mobile_only("Work mail on your phone", [chunk("On a laptop, open Outlook instead.")])
    assert not for_mobile_only("Work mail", phone)  # its title names no phone
    assert for_another_device("how do I read work mail on my laptop", "Work mail on your phone", phone)
    assert not for_another_device("how do I read work mail on my phone", "Work mail on your phone", phone)


@pytest.mark.parametrize(
    ("heading", "device"),
    [
        ("Phone (iPhone or Android)", "mobile"),
        ("Set up > Windows", "computer"),
        ("On your laptop", "computer"),
        ("Computer and phone", ""),
        ("Before you start", ""),
    ],
)
def test_a_heading_is_for_one_kind_of_device_only_when_it_names_that_kind_alone(heading, device):
    from nodes.support.device_fit import heading_device

    assert heading_device(heading) == device
