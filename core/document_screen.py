"""Instructions in a document that no IT department gives: send your credentials, codes or a payment to someone,
or turn off your security software. The injection screen (core/injection.py) applied to documents.

A knowledge base is trusted to say how to fix things, but a page can be planted or copied from a phishing mail;
its steps are quoted to users as the answer and walked through as "Step 1 of 3". Sections whose text matches are
flagged at indexing (listed for the admin with the document), quoted with a warning, and their steps withheld from
walkthroughs. Warnings against it ("IT will never ask you to e-mail your password") and descriptions of what a scam
asks for ("Requests to buy gift cards", "e-mails asking you to send your password") are not flagged: a negation or
such a description before the instruction in the same sentence clears it.

Each rule is a row — name, pattern, texts it must and must not match — and the rows' examples are its tests.
Patterns are bounded (`{0,80}` gaps, one sentence) so their cost stays linear in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_GAP = r"[^.!?\n]{0,80}?"  # within one sentence
_SEND = (
    r"(?:send|e-?mail|mail|forward|share|give|provide|reply\s+with|text|message|dm|post|paste|read\s+out|tell|"
    r"submit|hand\s+over|disclose|call\s+\S+\s+with)"
)
_SECRET = (
    r"(?:passwords?|passcodes?|pass\s*phrases?|pins?\b|credentials|log-?in\s+details|sign-?in\s+details|"
    r"(?:one-time|verification|security|authentication|mfa|2fa|otp|sms|recovery|backup|access|authenticator)\s+codes?|"
    r"codes?\s+(?:from|in|on)\s+(?:your\s+)?(?:authenticator|phone|text|sms|token)|recovery\s+keys?|"
    r"bitlocker\s+(?:recovery\s+)?keys?|card\s+(?:number|details)|cvv|social\s+security\s+number|bank\s+details)"
)
# "password reset e-mails", "password manager", "email/password sign-in": about the secret, not the secret itself
_NOT_THE_SECRET = (
    r"(?!\s*(?:-|/)?\s*(?:reset|resets|change|changes|expir\w*|manager|managers|polic(?:y|ies)|requirements?|rules?|"
    r"hints?|strength|field|fields|prompts?|protected|protection|less|sign-?in|log-?in|authentication)\b)"
)
_PAY = (
    r"(?:buy|purchase|get|send|transfer|wire|pay)" + _GAP + r"(?:gift\s*cards?|itunes\s+cards?|google\s+play\s+cards?|"
    r"bitcoin|crypto(?:currency)?|wire\s+transfer|western\s+union|moneygram|payment\s+to)"
)
_DISABLE = (
    r"(?:disable|turn\s+off|switch\s+off|uninstall|remove|deactivate|stop|kill|bypass|pause)"
    + _GAP
    + r"(?:anti-?virus|anti-?malware|defender|windows\s+security|firewall|endpoint\s+(?:protection|security)|edr\b|"
    r"crowdstrike|sentinel\s*one|sophos|mcafee|norton|security\s+software|real-?time\s+protection|smartscreen|"
    r"tamper\s+protection|gatekeeper|(?:two|2)-?factor|mfa\b|multi-?factor)"
)
_NEGATION = re.compile(
    r"\b(?:never|not|don't|do\s+not|won't|will\s+not|no\s+one|nobody|no\s+one\s+from|nor|avoid|refuse|beware|scam|"
    r"phishing|fraud|ne\s+jamais|nie)\b",
    re.I,
)


# a sentence that describes what a scam asks for ("Requests to buy gift cards", "messages asking you to share your
# code", "signs of phishing: …") names the instruction to warn about it, as a negation does
_DESCRIBED = re.compile(
    r"\b(?:requests?\s+(?:to|for)|(?:messages?|e-?mails?|mails?|calls?|texts?|callers?|senders?|someone)\s+"
    r"(?:that\s+|who\s+)?(?:ask|asks|asking|tell|tells|telling|urge|urges|urging|demand|demands|demanding|"
    r"pressure|pressures|pressuring)\b|signs?\s+of|red\s+flags?|warning\s+signs?|suspicious)",
    re.I,
)


@dataclass(frozen=True)
class ScreenRule:
    name: str
    pattern: re.Pattern[str]
    matches: tuple[str, ...]
    not_matches: tuple[str, ...]


RULES: tuple[ScreenRule, ...] = (
    ScreenRule(
        "send-credentials",
        re.compile(
            rf"\b{_SEND}\b(?!/){_GAP}\b{_SECRET}{_NOT_THE_SECRET}{_GAP}(?:\bto\b|\bwith\b|@|\bat\b)"
            rf"|\b{_SECRET}\b{_NOT_THE_SECRET}{_GAP}\b(?:to|at)\b"
            rf"{_GAP}(?:@|\be-?mail\b|\baddress\b|\bnumber\b)",
            re.I,
        ),
        matches=(
            "E-mail your password to it-support@secure-helpdesk.example so we can verify your account.",
            "Reply with the 6-digit verification code you receive to confirm the migration.",
            "Send your login details to the address below.",
            "Your password and PIN to verify@mail.example",
        ),
        not_matches=(
            "IT will never ask you to e-mail your password to anyone.",
            "Reset your password at the self-service portal.",
            "Enter the verification code from your authenticator app on the sign-in page.",
            "Share your screen with the technician.",
            "Send password reset emails to all users of the organization.",
            "Sign in with email/password, a company account or SAML, with any method the admin allows.",
            "Give your password manager access to the browser extension with one click.",
            "E-mails asking you to send your password to an outside address.",
        ),
    ),
    ScreenRule(
        "payment",
        re.compile(rf"\b{_PAY}", re.I),
        matches=(
            "Buy four gift cards and send the codes to the service desk manager.",
            "Pay the license fee by wire transfer to the account below.",
        ),
        not_matches=(
            "Do not buy gift cards for anyone who asks by e-mail.",
            "Submit your expenses in the tool.",
            "Requests to change bank details, buy gift cards or share an MFA code.",
            "Messages urging you to buy gift cards for a manager are a scam sign.",
        ),
    ),
    ScreenRule(
        "disable-security",
        re.compile(rf"\b{_DISABLE}", re.I),
        matches=(
            "Turn off Windows Defender real-time protection before you run the installer.",
            "Uninstall CrowdStrike, then restart the laptop.",
            "Disable multi-factor authentication on your account.",
        ),
        not_matches=(
            "Never turn off the firewall on a company laptop.",
            "Turn off Bluetooth and turn it on again.",
            "Restart the VPN client.",
        ),
    ),
)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")


def unsafe_instructions(text: str, *, max_chars: int = 50_000) -> list[str]:
    """The rules a text breaks (sentence by sentence; a sentence with a negation before the match is a warning
    against it, not an instruction); [] for ordinary IT documentation."""
    found: list[str] = []
    for sentence in _SENTENCE.finditer(text[:max_chars]):
        for rule in RULES:
            if rule.name in found:
                continue
            match = rule.pattern.search(sentence.group(0))
            before = (0, match.end()) if match else (0, 0)
            if (
                match
                and not _NEGATION.search(sentence.group(0), *before)
                and not _DESCRIBED.search(sentence.group(0), *before)
            ):
                found.append(rule.name)
    return found


WARNING = (
    "⚠️ Careful: this part of the document asks you to {what}. IT will never ask for that — check with the service "
    "desk before you do it."
)
_WHAT = {
    "send-credentials": "send a password or code to someone",
    "payment": "make a payment or buy gift cards",
    "disable-security": "turn off security software",
}


def warning_for(rules: list[str]) -> str:
    """The line shown above a quoted passage that breaks `rules`."""
    return WARNING.format(what=" and ".join(_WHAT[r] for r in rules))
