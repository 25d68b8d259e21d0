"""The fixed sentences deskmate says when no LLM writes them (or when one failed)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphs.support import SupportContext

LLM_FALLBACK_NOTICE = (
    "The AI model could not be reached or gave no usable reply, so this reply was put together directly from "
    "the knowledge base."
)

SMALL_TALK_REPLIES = {
    "greeting": "Hi! I'm deskmate, your IT-support assistant. Ask me something like \"How do I connect to "
    "the VPN?\" or describe a problem you're having, and I'll help.",
    "thanks": "You're welcome! Is there anything else I can help with?",
    "farewell": "Glad I could help. If anything else comes up, just ask. Bye for now!",
    "resolved": "Great, glad it's working! Is there anything else I can help with?",
}

NOT_FOUND = "I couldn't find this in the knowledge base, so I won't guess at steps that might be wrong."
NOT_FOUND_SEARCHED = "I searched for “{query}”."
NOT_FOUND_CLOSEST = "The closest articles I found were: {titles}, but none of them answers it."
NOT_FOUND_DEVICE = "“{title}” is written for computers and says nothing about a phone or tablet."
NOT_FOUND_COMPUTER = "“{title}” is written for phones and tablets and says nothing about a computer."
NOT_FOUND_TRIED = "You've already tried {fix}, and “{title}” is about doing that."
NOT_FOUND_NEXT = (
    "Could you rephrase it with the name of the app, device or service involved? "
    "If it's urgent, please contact the IT service desk."
)


def not_found_phrases() -> tuple[str, ...]:
    """The fixed wording of a "couldn't find" reply (around the search words and the closest titles): the trace
    writer counts a word inside one of them, verbatim, as the system's, not a person's."""
    from nodes.support.modes import literal_parts

    return (
        NOT_FOUND,
        *literal_parts(NOT_FOUND_SEARCHED),
        *literal_parts(NOT_FOUND_CLOSEST),
        *literal_parts(NOT_FOUND_DEVICE),
        *literal_parts(NOT_FOUND_COMPUTER),
        *literal_parts(NOT_FOUND_TRIED),
        NOT_FOUND_NEXT,
    )


CLARIFY_GENERIC = (
    "I'd like to help. Which app, device or service is it (for example the VPN, e-mail, Wi-Fi or a printer), "
    "and what exactly happens when you try?"
)
CLARIFY_WITH_OS = "Got it, you're on {os}. What would you like help with: which app, device or service, and what happens when you try?"
CLARIFY_OPTIONS = "To point you to the right steps: is this about {options}?"

# --- dialogue acts (nodes/support/converse.py) ---------------------------------------------------------------------
CLOSING_REPLIES = {
    "thanks": "You're welcome!",
    "farewell": "Glad I could help. Bye for now!",
    "resolved": "Great, glad it's working!",
}
CLOSED_FLOW = {
    "thanks": "I've marked this issue as resolved.",
    "farewell": "I've closed the troubleshooting for now; if the problem comes back, just tell me.",
    "resolved": "I've marked this issue as resolved.",
}
CLOSED_OFFER = 'I haven\'t opened the ticket. If you still need one, just say "open a ticket".'
CLOSED_TICKET = "I've closed ticket **{id}** since it's working now."
ANYTHING_ELSE = "Is there anything else I can help with?"

BOT_DISCLOSURE = "I'm deskmate, an automated assistant for the IT help desk, not a person."
REACH_A_PERSON_CONTACT = "To reach a person: {contact}."
REACH_A_PERSON_TICKET = (
    "If you'd like a person to help, say \"talk to a person\" and I'll pass this conversation "
    "to the IT service desk as a ticket."
)
REACH_A_PERSON_DESK = "To reach a person, please contact the IT service desk."

CAPABILITIES_INTRO = "I'm deskmate, the IT help desk's automated assistant. I can:"
CAPABILITIES = {
    "answer": "answer how-to questions from the IT knowledge base (VPN, e-mail, Wi-Fi, printers, passwords …), "
    "with sources",
    "troubleshoot": "walk you through fixing a problem, one step at a time",
    "status": "check the status page for outages",
    "tickets": "open a ticket or a request for the service desk (you confirm first), and tell you how your "
    "tickets are doing",
    "person": "put you in touch with a person",
}
CAPABILITIES_ASK = "What do you need help with?"

OUT_OF_SCOPE = (
    "That's outside what I can help with: I'm deskmate, the IT help desk's assistant. I can answer IT "
    "questions, help fix problems with your computer, accounts and apps, and open tickets or requests "
    "for the service desk. Is there anything IT-related I can do for you?"
)
RESUME_HINT = '(When you\'re ready, say "continue" to get back to: {issue})'


def reach_a_person(ctx: SupportContext) -> str:
    """How a person is reached here: the configured contact, a ticket, or the service desk."""
    if ctx.handoff_contact:
        return REACH_A_PERSON_CONTACT.format(contact=ctx.handoff_contact.strip().rstrip("."))
    return REACH_A_PERSON_TICKET if ctx.tickets is not None else REACH_A_PERSON_DESK


def capabilities(ctx: SupportContext) -> str:
    """What this deployment can do, as a short list (the status page and tickets only when configured)."""
    offered = (
        ["answer", "troubleshoot"]
        + (["status"] if ctx.status is not None else [])
        + (["tickets"] if ctx.tickets is not None else [])
        + (["person"] if ctx.handoff_contact or ctx.tickets else [])
    )
    lines = "\n".join(f"- {CAPABILITIES[name]}" for name in offered)
    return f"{CAPABILITIES_INTRO}\n\n{lines}\n\n{CAPABILITIES_ASK}"
