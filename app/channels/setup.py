"""Turning the configured chat platforms on, in the app's lifespan."""

from __future__ import annotations

import asyncio
import logging

from fastapi.concurrency import run_in_threadpool

from app.channels.conversation import ChannelService
from app.channels.store import ChannelStore

log = logging.getLogger(__name__)


def build_slack(resources, settings):
    """The Slack channel when its token and signing secret are set, else None."""
    if not settings.integrations.slack_enabled:
        return None
    from app.channels.slack import SlackChannel, SlackConfig  # Bolt loads only where Slack is used

    service = ChannelService(
        chat=resources.chat,
        resources=resources,
        public_url=settings.integrations.public_url,
        group_map=settings.integrations.slack_group_map,
    )
    config = SlackConfig(
        bot_token=settings.integrations.slack_bot_token.get_secret_value(),
        signing_secret=settings.integrations.slack_signing_secret.get_secret_value(),
        api_url=settings.integrations.slack_api_url,
        group_map=settings.integrations.slack_group_map or None,
        app_token=settings.integrations.slack_app_token.get_secret_value()
        if settings.integrations.slack_app_token
        else None,
    )
    log.info("Slack: answering at /slack/events (Web API %s)", settings.integrations.slack_api_url)
    return SlackChannel(service, ChannelStore(resources.database), config)


def build_teams(resources, settings):
    """The Teams channel when its app id and secret are set, else None."""
    integrations = settings.integrations
    if not integrations.teams_enabled:
        return None
    from app.channels.teams import TeamsChannel, TeamsConfig  # the Agents SDK loads only where Teams is used

    service = ChannelService(
        chat=resources.chat,
        resources=resources,
        public_url=integrations.public_url,
        group_map=integrations.teams_group_map,
    )
    config = TeamsConfig(
        app_id=integrations.teams_app_id,
        app_password=integrations.teams_app_password.get_secret_value(),
        token_url=integrations.teams_token_endpoint,
        openid_metadata_url=integrations.teams_openid_metadata_url,
        group_map=integrations.teams_group_map or None,
    )
    log.info("Teams: answering at /api/messages (keys from %s)", integrations.teams_openid_metadata_url)
    return TeamsChannel(service, ChannelStore(resources.database), config)


async def ticket_update_loop(channels: list, resources, interval_s: float) -> None:
    """Every `interval_s`, tell each platform thread whose ticket changed status; forgets old deliveries."""
    while True:
        await asyncio.sleep(interval_s)
        for channel in channels:
            try:
                told = await run_in_threadpool(channel.tell_ticket_changes, resources.tickets)
                await run_in_threadpool(channel.store.prune)
                if told:
                    log.info("told %d ticket update(s) in their threads", told)
            except Exception as exc:  # the next round tries again
                log.warning("ticket updates for chat threads failed: %s", exc)
