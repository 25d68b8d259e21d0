"""The decision agent's actions, one row each: the registry every other list of actions is made from.

A row names the action (what decide returns), the graph node that carries it out and its function, where
that node goes next, whether its LLM tokens are the reply (streamed as they come), and, when the decision LLM
may choose it, how the LLM sees it (`ActionSpec`: a description, example messages, a rule; nodes/support/
catalogue.py selects among them per message). From these rows come the `Action` Literal's values (a test
checks them), the graph's nodes and conditional edges (graphs/support.py), decide's list of actions and
the LLM's catalogue, and the chat service's reply and token node sets (app/chat_service.py).

Adding an action is one row here and its node function; docs/architecture.md walks through one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Literal, Sequence

from nodes.support.answer import answer
from nodes.support.catalogue import ActionCatalogue, ActionSpec
from nodes.support.check_status import check_status
from nodes.support.clarify import clarify
from nodes.support.converse import converse
from nodes.support.embed_query import embed_query
from nodes.support.integration import use_integration
from nodes.support.search_tickets import search_tickets
from nodes.support.ticket import ticket
from nodes.support.troubleshoot import troubleshoot

if TYPE_CHECKING:
    from graphs.support import SupportContext, SupportState

# where an action's node goes when it is done:
#   reply        it wrote the turn's reply: on to (localize →) respond
#   walkthrough  a troubleshooting step: a reply, or the ticket offer when the walkthrough escalated
#   decide       it gathered something for the decision (the status page): back to decide
#   retrieve     it chose and embedded another wording: on to retrieve, then decide
Then = Literal["reply", "walkthrough", "decide", "retrieve"]


@dataclass(frozen=True)
class ActionRow:
    """One action of the decision agent."""

    name: str  # what decide returns
    node: str  # the graph node that carries it out
    step: Callable[..., dict]  # that node's function
    then: Then = "reply"
    streams: bool = False  # the LLM tokens its node writes are the reply itself (streamed to the user)
    offer: ActionSpec | None = None  # how the decision LLM sees it; None: only the policy in code chooses it

    @property
    def writes_reply(self) -> bool:
        return self.then in ("reply", "walkthrough")


ACTIONS: tuple[ActionRow, ...] = (
    ActionRow(
        "answer",
        node="answer",
        step=answer,
        streams=True,
        offer=ActionSpec(
            "answer",
            "the documents are enough to answer, or nothing more can be found",
            (
                "How do I connect to the VPN from home?",
                "What is the guest Wi-Fi password?",
                "Where do I submit my travel expenses?",
                "How do I set up my work e-mail on my phone?",
                "What are the steps to change my password?",
            ),
        ),
    ),
    ActionRow(
        "clarify",
        node="clarify",
        step=clarify,
        streams=True,
        offer=ActionSpec(
            "clarify",
            "the message is too vague to know what system or problem it is about",
            (
                "It's not working",
                "I have a problem with my computer",
                "Something is broken, can you help?",
                "It keeps giving me an error",
                "help",
            ),
        ),
    ),
    # a reply that needs no search: greetings, closings, what deskmate is and can do, off-topic, language notice;
    # only the policy in code chooses it
    ActionRow("converse", node="converse", step=converse),
    ActionRow(
        "search_kb",
        node="embed_query",
        step=embed_query,
        then="retrieve",
        offer=ActionSpec(
            "search_kb",
            "search the knowledge base again with other words (only if searches remain)",
            (
                "Is there an article about configuring Outlook rules?",
                "Search the docs for the software install policy",
                "Look up the guide for mapping a network drive",
                "Find the documentation on badge access for visitors",
            ),
            requires=("knowledge_base",),
            rule="Never search more than the remaining searches allow.",
        ),
    ),
    ActionRow(
        "troubleshoot",
        node="troubleshoot",
        step=troubleshoot,
        then="walkthrough",
        offer=ActionSpec(
            "troubleshoot",
            "the employee has a problem and the documents contain steps to fix it; guide them step by step",
            (
                "My VPN keeps disconnecting",
                "Outlook crashes every time I open it",
                "My laptop screen stays black after the update",
                "The Wi-Fi drops every few minutes",
                "Teams has no sound in meetings",
                "My keyboard stopped working",
            ),
            requires=("knowledge_base",),
            rule='A problem ("doesn\'t work", "keeps failing") with documented steps → troubleshoot, not answer.',
        ),
    ),
    ActionRow(
        "check_status",
        node="check_status",
        step=check_status,
        then="decide",
        offer=ActionSpec(
            "check_status",
            "the message asks about an outage, or describes a problem a known incident could explain",
            (
                "Is e-mail down for everyone?",
                "Are there any known outages today?",
                "Is the VPN having problems at the moment?",
                "Is Jira down or is it just me?",
                "Any incidents affecting Teams?",
            ),
            requires=("status_page",),
            rule="Never check the status page twice for one message.",
        ),
    ),
    ActionRow(
        "create_ticket",
        node="ticket",
        step=ticket,
        offer=ActionSpec(
            "create_ticket",
            "offer a ticket for the service desk (the employee always confirms before it is created)",
            (
                "I want to open a ticket",
                "Can I talk to someone from IT?",
                "Please escalate this to a technician",
                "None of this helped, I need a human",
                "Log a request for a second monitor",
            ),
            rule="Offer a ticket when the documents cannot help with a problem, or when the employee asks for a person.",
        ),
    ),
    ActionRow(
        "search_tickets",
        node="search_tickets",
        step=search_tickets,
        offer=ActionSpec(
            "search_tickets",
            "the employee asks about their existing tickets",
            (
                "Any update on my support request?",
                "Show me my open tickets",
                "Has anyone looked at the issue I reported yesterday?",
                "What happened to the request I raised last week?",
                "Is DM-000123 closed yet?",
            ),
        ),
    ),
    # a configured read-only lookup in another system (`integration` names it); each integration is offered to
    # the LLM under its own name (catalogue.integration_action) and carried out by this one node
    ActionRow("use_integration", node="use_integration", step=use_integration, streams=True),
)


def registered_actions() -> tuple[ActionRow, ...]:
    """Every action's row, read when a graph is built or a decision checked (so a test can register one more)."""
    return ACTIONS


def action_row(name: str) -> ActionRow | None:
    """The registry row of an action; None for a name no row has."""
    return next((row for row in ACTIONS if row.name == name), None)


def builtin_specs() -> tuple[ActionSpec, ...]:
    """The actions the decision LLM may be offered, in registry order."""
    return tuple(row.offer for row in ACTIONS if row.offer is not None)


def builtin_names() -> tuple[str, ...]:
    """The names of the actions the decision LLM may be offered, in registry order."""
    return tuple(spec.name for spec in builtin_specs())


BUILTIN_ACTIONS: tuple[ActionSpec, ...] = builtin_specs()
BUILTIN_NAMES: tuple[str, ...] = builtin_names()


def builtin_catalogue() -> ActionCatalogue:
    """The offered actions, not embedded: what the decision prompt describes when no catalogue is configured."""
    return ActionCatalogue(builtin_specs())


def parse_action_names(text: str, known: Sequence[str] | None = None) -> tuple[str, ...]:
    """A comma-separated list of action names (DESKMATE_CORE_ACTIONS), checked against `known`."""
    known = builtin_names() if known is None else known
    names = tuple(dict.fromkeys(n.strip().lower() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown action(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return names


def offer_actions(state: SupportState, ctx: SupportContext) -> dict:
    """The state update naming the actions offered to the decision LLM this turn ({} without a catalogue).

    decide may run again in the same turn (after a status check or another search); the turn keeps the
    set chosen first, from the embedding of the user's own wording."""
    catalogue = ctx.actions
    if catalogue is None or state["turn"].get("action_selection"):
        return {}
    selection = catalogue.select(
        ctx, query=state["turn"]["query"], query_embedding=state["turn"].get("query_embedding") or None
    )
    return {
        "offered_actions": list(selection.offered),
        "action_selection": selection.mode,
        "action_selection_reason": selection.reason,
    }
