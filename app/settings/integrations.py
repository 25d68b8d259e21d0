"""Settings of the other systems deskmate talks to: the status page, Jira, chat platforms."""

from __future__ import annotations

from pydantic import Field, SecretStr, field_validator, model_validator

from app.settings.base import Group, env


class IntegrationsSettings(Group):
    """Other systems: the company status page, Jira (each optional)."""

    status_page_url: str | None = Field(
        None,
        validation_alias=env("DESKMATE_STATUS_PAGE_URL"),
        description="Company status page (Atlassian Statuspage): the page address, e.g. "
        "https://status.example.com, or its /api/v2/summary.json address; unset: no status checks.",
    )
    status_ttl_s: float = Field(
        60.0,
        ge=1,
        le=3600,
        validation_alias=env("DESKMATE_STATUS_TTL_S"),
        description=(
            "How long a fetched status is reused before the page is asked again; "
            "a failed check is retried after at most 10 s."
        ),
    )
    status_timeout_s: float = Field(
        3.0,
        gt=0,
        le=30,
        validation_alias=env("DESKMATE_STATUS_TIMEOUT_S"),
        description=(
            "Timeout for fetching the status page; on expiry deskmate answers"
            " normally and says the status could not be checked."
        ),
    )
    jira_url: str | None = Field(
        None,
        validation_alias=env("JIRA_URL"),
        description=(
            "Jira base URL, e.g. `https://yourcompany.atlassian.net`. Jira is "
            "used only when `JIRA_URL`, `JIRA_PROJECT_KEY` and `JIRA_TOKEN` are "
            "all set; setting some but not all is refused at start-up."
        ),
    )
    jira_project_key: str | None = Field(
        None, validation_alias=env("JIRA_PROJECT_KEY"), description="Project that receives deskmate's issues, e.g. IT."
    )
    jira_token: SecretStr | None = Field(
        None,
        validation_alias=env("JIRA_TOKEN", "JIRA_API_TOKEN"),
        description=(
            "Jira Cloud API token (with `JIRA_EMAIL`, sent as Basic "
            "auth) or a Server/Data Center personal access token (sent "
            "as Bearer)."
        ),
    )
    jira_email: str | None = Field(
        None,
        validation_alias=env("JIRA_EMAIL"),
        description="Account e-mail for Jira Cloud (Basic auth with the API token).",
    )
    jira_issue_type: str = Field(
        "Task",
        min_length=1,
        validation_alias=env("JIRA_ISSUE_TYPE"),
        description="Issue type of created issues (e.g. `IT Help`).",
    )
    jira_priorities: str = Field(
        "Low,Medium,High,Highest",
        validation_alias=env("JIRA_PRIORITIES"),
        description=(
            "Jira priority names for deskmate's low, medium, high, critical; "
            "empty to send no priority (projects without the field)."
        ),
    )
    jira_timeout_s: float = Field(
        10.0,
        gt=0,
        le=120,
        validation_alias=env("DESKMATE_JIRA_TIMEOUT_S"),
        description=("Per-call Jira timeout; on expiry the ticket stays local-only with the reason recorded."),
    )

    # --- chat platforms: Slack (optional; on when the bot token and the signing secret are both set) ----------
    slack_bot_token: SecretStr | None = Field(
        None,
        validation_alias=env("DESKMATE_SLACK_BOT_TOKEN"),
        description=(
            "The Slack app's bot token (`xoxb-…`). With `DESKMATE_SLACK_SIGNING_SECRET` it turns on "
            "`POST /slack/events` (see the Slack page of the docs)."
        ),
    )
    slack_signing_secret: SecretStr | None = Field(
        None,
        validation_alias=env("DESKMATE_SLACK_SIGNING_SECRET"),
        description="The Slack app's signing secret: every request to `/slack/events` must be signed with it.",
    )
    slack_api_url: str = Field(
        "https://slack.com/api/",
        validation_alias=env("DESKMATE_SLACK_API_URL"),
        description="Base URL of Slack's Web API (a test or a proxy can point it elsewhere).",
    )
    slack_app_token: SecretStr | None = Field(
        None,
        validation_alias=env("DESKMATE_SLACK_APP_TOKEN"),
        description=(
            "An app-level token (`xapp-…`, scope `connections:write`) for Socket Mode, `deskmate slack --socket`: "
            "for networks that accept no calls from Slack."
        ),
    )
    slack_group_map: dict[str, str] = Field(
        default_factory=dict,
        validation_alias=env("DESKMATE_SLACK_GROUP_MAP"),
        description=(
            'JSON: Slack user group handle → deskmate audience group, e.g. `{"it-staff": "it"}`. A Slack user in a '
            "mapped group may read that group's restricted documents (needs the `usergroups:read` scope)."
        ),
    )
    # --- chat platforms: Microsoft Teams (optional; on when the app id and its secret are both set) -------------
    teams_app_id: str | None = Field(
        None,
        validation_alias=env("DESKMATE_TEAMS_APP_ID"),
        description=(
            "The Azure Bot's Microsoft App ID (a GUID). With `DESKMATE_TEAMS_APP_PASSWORD` it turns on "
            "`POST /api/messages` (see the Teams page of the docs); every activity's token must name it as audience."
        ),
    )
    teams_app_password: SecretStr | None = Field(
        None,
        validation_alias=env("DESKMATE_TEAMS_APP_PASSWORD"),
        description="The bot's client secret: deskmate gets its token for replies to Teams with it.",
    )
    teams_tenant_id: str | None = Field(
        None,
        validation_alias=env("DESKMATE_TEAMS_TENANT_ID"),
        description=(
            "The Entra tenant of a single-tenant bot (the token for replies is asked of that tenant); unset: a "
            "multi-tenant bot (the `botframework.com` tenant)."
        ),
    )
    teams_openid_metadata_url: str = Field(
        "https://login.botframework.com/v1/.well-known/openidconfiguration",
        validation_alias=env("DESKMATE_TEAMS_OPENID_METADATA_URL"),
        description=(
            "The Bot Framework's OpenID metadata document: its `jwks_uri` names the keys incoming activities "
            "are signed with, its `issuer` the issuer they must carry."
        ),
    )
    teams_token_url: str | None = Field(
        None,
        validation_alias=env("DESKMATE_TEAMS_TOKEN_URL"),
        description=(
            "The token endpoint deskmate gets its bearer token for the Bot Connector from (client credentials); "
            "unset: `https://login.microsoftonline.com/<tenant or botframework.com>/oauth2/v2.0/token`."
        ),
    )
    teams_group_map: dict[str, str] = Field(
        default_factory=dict,
        validation_alias=env("DESKMATE_TEAMS_GROUP_MAP"),
        description=(
            'JSON: a Teams team (its id or its name) → deskmate audience group, e.g. `{"IT Staff": "it"}`. A '
            "question asked in a mapped team's channels may use that group's restricted documents."
        ),
    )
    public_url: str | None = Field(
        None,
        validation_alias=env("DESKMATE_PUBLIC_URL"),
        description=(
            "The address people reach deskmate at, e.g. `https://deskmate.example.com`: chat platforms link "
            "sources to `<public url>/view/<document>`. Unset: sources are named without links."
        ),
    )
    channel_ticket_poll_s: float = Field(
        60.0,
        ge=0,
        validation_alias=env("DESKMATE_CHANNEL_TICKET_POLL_S"),
        description=(
            "How often tickets created from Slack or Teams are checked for status changes (the local store, and "
            "Jira when configured); a change is posted in the thread the ticket came from. 0: never."
        ),
    )

    @property
    def slack_enabled(self) -> bool:
        return self.slack_bot_token is not None and self.slack_signing_secret is not None

    @property
    def teams_enabled(self) -> bool:
        return self.teams_app_id is not None and self.teams_app_password is not None

    @property
    def teams_token_endpoint(self) -> str:
        tenant = self.teams_tenant_id or "botframework.com"
        return self.teams_token_url or f"https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token"

    @model_validator(mode="after")
    def _refuse_partial_slack_config(self) -> IntegrationsSettings:
        if (self.slack_bot_token is None) != (self.slack_signing_secret is None):
            missing = (
                "DESKMATE_SLACK_SIGNING_SECRET" if self.slack_signing_secret is None else "DESKMATE_SLACK_BOT_TOKEN"
            )
            raise ValueError(
                f"Slack needs DESKMATE_SLACK_BOT_TOKEN and DESKMATE_SLACK_SIGNING_SECRET together; missing: {missing}"
            )
        if (self.teams_app_id is None) != (self.teams_app_password is None):
            missing = "DESKMATE_TEAMS_APP_PASSWORD" if self.teams_app_password is None else "DESKMATE_TEAMS_APP_ID"
            raise ValueError(
                f"Teams needs DESKMATE_TEAMS_APP_ID and DESKMATE_TEAMS_APP_PASSWORD together; missing: {missing}"
            )
        if self.public_url and not self.public_url.startswith(("https://", "http://")):
            raise ValueError(
                "DESKMATE_PUBLIC_URL must start with https:// (or http://), e.g. https://deskmate.example.com"
            )
        return self

    @field_validator(
        "jira_url",
        "jira_project_key",
        "jira_token",
        "jira_email",
        "slack_bot_token",
        "slack_signing_secret",
        "slack_app_token",
        "teams_app_id",
        "teams_app_password",
        "teams_tenant_id",
        "teams_token_url",
        "public_url",
        mode="before",
    )
    @classmethod
    def _empty_means_unset(cls, value):
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("status_page_url", mode="before")
    @classmethod
    def _status_page_url_is_http(cls, value):
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        if not isinstance(value, str) or not value.strip().startswith(("https://", "http://")):
            raise ValueError(
                "DESKMATE_STATUS_PAGE_URL must start with https:// (or http://), e.g. https://status.example.com"
            )
        return value.strip()

    @model_validator(mode="after")
    def _refuse_partial_jira_config(self) -> IntegrationsSettings:
        given = {"JIRA_URL": self.jira_url, "JIRA_PROJECT_KEY": self.jira_project_key, "JIRA_TOKEN": self.jira_token}
        missing = [name for name, value in given.items() if not value]
        if missing and (len(missing) < len(given) or self.jira_email):  # some set, not all
            raise ValueError(
                f"Jira needs JIRA_URL, JIRA_PROJECT_KEY and JIRA_TOKEN together; missing: "
                f"{', '.join(missing)} (unset all of them to keep tickets local-only)"
            )
        if self.jira_url and not self.jira_url.startswith(("https://", "http://")):
            raise ValueError("JIRA_URL must start with https:// (or http://), e.g. https://yourcompany.atlassian.net")
        if self.jira_project_key and not self.jira_project_key.replace("_", "").isalnum():
            raise ValueError("JIRA_PROJECT_KEY is a project key such as IT or HELPDESK, not a name")
        if self.jira_priorities.strip() and len(self.jira_priority_names or ()) != 4:
            raise ValueError(
                "JIRA_PRIORITIES needs four comma-separated names (for low, medium, high, critical), "
                "e.g. Low,Medium,High,Highest — or empty to send no priority"
            )
        return self

    @property
    def jira_enabled(self) -> bool:
        return bool(self.jira_url and self.jira_project_key and self.jira_token)

    @property
    def jira_priority_names(self) -> tuple[str, ...] | None:
        names = tuple(n.strip() for n in self.jira_priorities.split(",") if n.strip())
        return names or None
