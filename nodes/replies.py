"""The fixed sentences deskmate says when no LLM writes them (or when one failed)."""

from __future__ import annotations

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

NOT_FOUND = (
    "I couldn't find this in the knowledge base, so I won't guess at steps that might be wrong."
)
NOT_FOUND_SEARCHED = "I searched for “{query}”."
NOT_FOUND_CLOSEST = "The closest articles I found were: {titles}, but none of them answers it."
NOT_FOUND_NEXT = (
    "Could you rephrase it with the name of the app, device or service involved? "
    "If it's urgent, please contact the IT service desk."
)

CLARIFY_GENERIC = (
    "I'd like to help. Which app, device or service is it (for example the VPN, e-mail, Wi-Fi or a printer), "
    "and what exactly happens when you try?"
)
CLARIFY_WITH_OS = (
    "Got it, you're on {os}. What would you like help with: which app, device or service, and what happens when you try?"
)
CLARIFY_OPTIONS = "To point you to the right steps: is this about {options}?"
