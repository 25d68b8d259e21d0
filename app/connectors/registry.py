"""Builds a source's connector from its stored record; credentials are read from the environment at sync time."""

from __future__ import annotations

import os
from typing import Mapping

from app.connectors.base import Connector, ConnectorError
from app.connectors.confluence import ConfluenceConnector
from app.connectors.http import SourceHttp
from app.connectors.servicenow import ServiceNowConnector
from app.connectors.sharepoint import GraphToken, SharePointConnector
from app.connectors.website import USER_AGENT, WebsiteConnector
from app.connectors.zendesk import ZendeskConnector

SOURCE_TYPES = ("confluence", "servicenow", "sharepoint", "website", "zendesk")
MICROSOFT_AUTHORITY = "https://login.microsoftonline.com"


def credential(source: dict, role: str, environ: Mapping[str, str]) -> str | None:
    """The value of the environment variable the source names for `role` (None when it names none)."""
    name = (source.get("credential_env") or {}).get(role)
    if not name:
        return None
    value = environ.get(name)
    if not value:
        raise ConnectorError(
            f"The environment variable {name} (this source's '{role}') is not set in deskmate's "
            "environment; set it and sync again."
        )
    return value


def build_connector(source: dict, environ: Mapping[str, str] | None = None) -> Connector:
    environ = os.environ if environ is None else environ
    label = f"{source['type'].capitalize()} at {source['base_url']}"
    if source["type"] == "confluence":
        user, token = credential(source, "user", environ), credential(source, "token", environ)
        if user and token:
            http = SourceHttp(source["base_url"], auth=(user, token), source_label=label)  # Cloud: email + API token
        elif token:  # Data Center: a personal access token
            http = SourceHttp(source["base_url"], headers={"Authorization": f"Bearer {token}"}, source_label=label)
        else:
            http = SourceHttp(source["base_url"], source_label=label)  # anonymous access to a public space
        return ConfluenceConnector(
            http,
            space_keys=list(source["scope"].get("space_keys") or []),
            group_map=source.get("group_map") or {},
            edition=str(source["scope"].get("edition") or "cloud"),
        )
    if source["type"] == "servicenow":
        user, password = credential(source, "user", environ), credential(source, "password", environ)
        if not user or not password:
            raise ConnectorError("A ServiceNow source needs credential_env user and password.")
        http = SourceHttp(
            source["base_url"], auth=(user, password), headers={"Accept": "application/json"}, source_label=label
        )
        return ServiceNowConnector(
            http,
            knowledge_bases=list(source["scope"].get("knowledge_bases") or []),
            group_map=source.get("group_map") or {},
        )
    if source["type"] == "sharepoint":
        scope = source["scope"]
        client_id, secret = credential(source, "client_id", environ), credential(source, "client_secret", environ)
        if not client_id or not secret:
            raise ConnectorError("A SharePoint source needs credential_env client_id and client_secret.")
        authority = str(scope.get("authority") or MICROSOFT_AUTHORITY).rstrip("/")
        graph_token = GraphToken(f"{authority}/{scope['tenant']}/oauth2/v2.0/token", client_id, secret)
        http = SourceHttp(source["base_url"], auth=graph_token, source_label="Microsoft Graph")
        return SharePointConnector(
            http,
            site=str(scope["site"]),
            library=str(scope.get("library") or "Documents"),
            group_map=source.get("group_map") or {},
        )
    if source["type"] == "zendesk":
        email, token = credential(source, "email", environ), credential(source, "token", environ)
        if not email or not token:
            raise ConnectorError("A Zendesk source needs credential_env email and token (an agent's API token).")
        http = SourceHttp(source["base_url"], auth=(f"{email}/token", token), source_label=label)
        return ZendeskConnector(
            http, section_ids=list(source["scope"].get("section_ids") or []), group_map=source.get("group_map") or {}
        )
    if source["type"] == "website":
        scope = source["scope"]
        http = SourceHttp(source["base_url"], headers={"User-Agent": USER_AGENT}, source_label=label)
        return WebsiteConnector(
            http,
            start_urls=list(scope.get("start_urls") or []),
            sitemaps=list(scope.get("sitemaps") or []),
            max_pages=int(scope.get("max_pages") or 200),
            max_depth=int(scope.get("max_depth", 2)),
        )
    raise ConnectorError(f"No connector for sources of type '{source['type']}'.")
