"""Vendor token formats: a distinctive prefix plus a random body (after gitleaks' and CredSweeper's
public rule sets). A match that looks like a documentation example (…EXAMPLE, 123456…, xxxx…) is
skipped: see heuristics.looks_fake.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from dataclasses import dataclass

from app.adapters.redaction.code_shapes import is_wordlike
from app.adapters.redaction.heuristics import looks_fake, shannon_entropy

# Services whose keys people keep under the service's own name, with no word like "key" or "token" in it
# (`twitter: …`, `algolia_admin = "…"`, `SENDGRID=…`): a random value under one of these names is a credential.
# From the vendors that public secret scanners name; words that are also common names of other things
# (age, linear, lob, readme, vault, sentry's `dsn`) are left out.
VENDOR_NAMES = frozenset(
    """
adafruit adobe airtable algolia alibaba anthropic asana atlassian auth0 authress beamer bitbucket bittrex brevo
clojars cloudflare codecov cohere coinbase confluent contentful databricks datadog deepseek digitalocean discord
doppler dropbox droneci duffel dynatrace easypost etsy facebook fastly figma finicity finnhub flickr flutterwave
frameio freshbooks gitter gocardless grafana groq hubspot huggingface intercom jfrog kucoin launchdarkly linkedin
mailchimp mailgun mapbox mattermost messagebird mistral netlify newrelic notion nytimes openai pagerduty paypal
perplexity plaid planetscale postman prefect pulumi pusher rapidapi replicate rubygems salesforce scalingo sendbird
sendgrid sendinblue shippo shopify sidekiq slack snyk sonarqube squarespace stripe sumologic supabase tavily
telegram travis trello twilio twitch twitter typeform vercel xai yandex zendesk
""".split()
)

_TOKEN_CHAR = re.compile(r"[A-Za-z0-9_\-]")
_COLOUR_CODE = re.compile(r"\x1b\[[0-9;]{1,8}m$")


def starts_token(text: str, at: int) -> bool:
    """True when a match at `at` is not the tail of a longer token (a terminal colour code may precede it)."""
    return at == 0 or not _TOKEN_CHAR.match(text[at - 1]) or bool(_COLOUR_CODE.search(text[max(0, at - 10) : at]))


def starts_word(text: str, at: int) -> bool:
    """Like `starts_token`, but a vendor's prefixed token may be glued to a name by - or _
    (`wifi-guest-ghp_…`, `my_ghp_…`, a file named after the key): only a letter or digit before it joins them."""
    return at == 0 or not text[at - 1].isalnum() or bool(_COLOUR_CODE.search(text[max(0, at - 10) : at]))


@dataclass(frozen=True)
class TokenRule:
    kind: str
    pattern: re.Pattern[str]
    check_fake: bool = True  # False where the real format itself has runs (Twitter's AAAA… bearer)


def _r(kind: str, regex: str, *, flags: int = 0, check_fake: bool = True) -> TokenRule:
    return TokenRule(kind, re.compile(regex, flags), check_fake)


# Start of a token: not inside a longer one (or right after a terminal colour code's `m`, which starts_token
# then checks). In the pattern itself, so a run like `eyJeyJeyJ…` is not re-scanned from every position.
B = r"(?:(?<![A-Za-z0-9])|(?<=m))"  # `wifi-guest-ghp_…`, `my_ghp_…`: a token glued to a name by - or _ still counts
E = r"(?![A-Za-z0-9_\-])"  # end

TOKEN_RULES: tuple[TokenRule, ...] = (
    # --- cloud providers
    _r("AWS_KEY", B + r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[0-9A-Z]{16}" + E),
    _r("AWS_KEY", B + r"ABSK[A-Za-z0-9+/]{100,}={0,2}"),  # Amazon Bedrock API key
    _r("AWS_KEY", B + r"bedrock-api-key-[A-Za-z0-9+/=]{20,}"),
    _r("AWS_KEY", r"amzn\.mws\.[0-9a-z]{8}-[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{12}"),
    _r("AZURE_KEY", r"(?i:AccountKey|SharedAccessKey)\s*=\s*(?P<secret>[A-Za-z0-9+/]{40,}={0,2})"),
    _r("AZURE_KEY", B + r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}" + E),  # Entra ID client secret
    _r("API_KEY", B + r"AIza[0-9A-Za-z_\-]{35}" + E),  # Google API key
    _r("TOKEN", B + r"ya29\.[0-9A-Za-z_\-]{20,}"),  # Google OAuth access token
    _r("TOKEN", B + r"1//0[0-9A-Za-z_\-]{30,}"),  # Google OAuth refresh token
    _r("API_KEY", B + r"GOCSPX-[A-Za-z0-9_\-]{24,}"),  # Google OAuth client secret
    _r("API_KEY", B + r"do[opr]_v1_[a-f0-9]{64}" + E),  # DigitalOcean
    _r("API_KEY", B + r"HRKU-[A-Za-z0-9_\-]{20,}"),  # Heroku
    _r("API_KEY", B + r"LTAI[A-Za-z0-9]{20}" + E),  # Alibaba Cloud
    _r("API_KEY", B + r"p8e-[A-Za-z0-9]{32}" + E),  # Adobe client secret
    _r("API_KEY", B + r"AQVN[A-Za-z0-9_\-]{35,38}" + E),  # Yandex Cloud API key
    _r("TOKEN", B + r"t1\.[A-Za-z0-9_\-]+=*\.[A-Za-z0-9_\-]{86}=*"),  # Yandex Cloud IAM token
    _r("TOKEN", B + r"00D[A-Za-z0-9]{12,15}![A-Za-z0-9._]{80,}"),  # Salesforce session
    _r("API_KEY", B + r"3MVG[A-Za-z0-9._]{60,}" + E),  # Salesforce connected-app key
    _r("API_KEY", B + r"dapi[a-f0-9]{32}(?:-\d)?" + E),  # Databricks
    _r("API_KEY", B + r"dt0[a-z]\d\d\.[A-Z0-9]{24}\.[A-Z0-9]{64}" + E),  # Dynatrace
    _r("API_KEY", B + r"akab-[0-9a-z]{16}-[0-9a-z]{16}" + E),  # Akamai EdgeGrid
    # --- code hosting, CI, registries
    _r("GITHUB_TOKEN", B + r"gh[pousr]_[A-Za-z0-9]{30,255}" + E),
    _r("GITHUB_TOKEN", B + r"github_pat_[A-Za-z0-9_]{22,255}" + E),
    _r("GITLAB_TOKEN", B + r"gl(?:pat|dt|ptt|rt|ft|imt|oas|cbt|soat|agent|ffct)-[A-Za-z0-9_\-.]{20,}"),
    _r("GITLAB_TOKEN", B + r"GR1348941[A-Za-z0-9_\-]{20,}"),
    _r("GITLAB_TOKEN", r"_gitlab_session=(?P<secret>[A-Za-z0-9_\-]{20,})"),  # a GitLab session cookie
    _r("API_KEY", B + r"ATATT3[A-Za-z0-9_\-=]{100,}"),  # Atlassian
    _r("API_KEY", B + r"ATCTT3xFfGN0[A-Za-z0-9_\-=]{80,}"),  # Bitbucket repository access token
    _r("API_KEY", B + r"BBDC-[A-Za-z0-9+/_\-]{40,}"),  # Bitbucket DC HTTP token
    _r("API_KEY", B + r"ATBB[A-Za-z0-9]{28,}"),  # Bitbucket app password
    _r("API_KEY", B + r"AKCp[A-Za-z0-9]{60,}" + E),  # JFrog API key
    _r("API_KEY", B + r"cmVmdGtuOjAxOj[A-Za-z0-9+/=]{40,}"),  # JFrog reference token
    _r("API_KEY", B + r"npm_[A-Za-z0-9]{36}" + E),
    _r("API_KEY", B + r"pypi-Ag[A-Za-z0-9_\-]{60,}"),  # PyPI and TestPyPI macaroons
    _r("API_KEY", B + r"oy2[a-z0-9]{43}" + E),  # NuGet
    _r("API_KEY", B + r"rubygems_[a-f0-9]{48}" + E),
    _r("API_KEY", B + r"CLOJARS_[a-z0-9]{60}" + E),
    _r("API_KEY", B + r"dckr_[op]at_[A-Za-z0-9_\-]{27,}"),  # Docker Hub (personal, organisation)
    _r("TOKEN", B + r"SWMTKN-1-[a-z0-9]{50}-[a-z0-9]{25}" + E),  # Docker swarm join token
    _r("API_KEY", B + r"SWMKEY-1-[A-Za-z0-9+/]{43}"),  # Docker swarm unlock key
    _r("API_KEY", B + r"sqp_[a-f0-9]{40}" + E),  # SonarQube
    _r("TOKEN", B + r"sgp_(?:(?:[a-f0-9]{16}|local)_)?[a-f0-9]{40}" + E),  # Sourcegraph
    _r("API_KEY", B + r"s-s4t2(?:ud|af)-[a-f0-9]{64}" + E),  # 42 intra client secret
    _r("API_KEY", B + r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk" + E),  # MaxMind licence key
    _r("API_KEY", B + r"4b1d(?=[A-Za-z0-9]{0,37}[A-Z])[A-Za-z0-9]{38}" + E),  # ClickHouse Cloud secret
    _r("API_KEY", B + r"sq[au]_[a-f0-9]{40}" + E),
    _r("TOKEN", B + r"hv[sbr]\.[A-Za-z0-9_\-]{24,}"),  # HashiCorp Vault
    _r("TOKEN", B + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,}"),  # Terraform Cloud
    _r("API_KEY", B + r"(?:vcp|vci|vca|vcr|vck)_[A-Za-z0-9]{24,}" + E),  # Vercel
    _r("API_KEY", B + r"nfp_[A-Za-z0-9]{36,}" + E),  # Netlify
    _r("API_KEY", B + r"sbp_(?:v0_)?[a-f0-9]{40}" + E),  # Supabase
    _r("TOKEN", B + r"sl\.(?:u\.)?[A-Za-z0-9_\-]{130,}"),  # Dropbox short-lived token
    _r(
        "TOKEN",
        B + r"(?=[A-Za-z0-9]{64})[A-Za-z0-9]{10,12}[B-Za-z0-9]A{10,12}[B-Za-z0-9][A-Za-z0-9]{40,44}" + E,
        check_fake=False,
    ),  # Dropbox long-lived
    _r("PASSWORD", B + r"pscale_(?:pw|tkn|oauth)_[A-Za-z0-9_\-.=]{32,64}"),  # PlanetScale
    # --- chat, mail, payments
    # the numeric team/user ids may hold runs (…1234567…); only the random tail is checked for a pattern
    _r("SLACK_TOKEN", B + r"xox[a-z]-(?:\d+-)*(?P<body>[A-Za-z0-9\-]{10,})"),
    _r("SLACK_TOKEN", B + r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+"),
    _r("SLACK_TOKEN", r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9+/_\-]{20,})"),
    _r("TOKEN", r"discord(?:app)?\.com/api/webhooks/\d+/(?P<secret>[A-Za-z0-9_\-]{20,})"),
    _r("TOKEN", B + r"[MNO][A-Za-z\d_\-]{23,25}\.[A-Za-z\d_\-]{6}\.[A-Za-z\d_\-]{27,}" + E),  # Discord bot
    _r("TOKEN", B + r"\d{8,10}:AA[A-Za-z0-9_\-]{33}" + E),  # Telegram bot
    _r("TOKEN", B + r"EAA[A-Za-z0-9]{80,}"),  # Facebook / Square
    _r("TOKEN", B + r"\d{12,18}\|[A-Za-z0-9_\-]{24,28}" + E),  # Facebook app token
    _r("TOKEN", B + r"IG[A-Za-z0-9_\-]{150,}"),  # Instagram
    _r("TOKEN", B + r"IGQVJ[A-Za-z0-9_\-=]{100,}"),  # Instagram (shorter, with '=')
    _r("TOKEN", B + r"A{20,40}[A-Za-z0-9%]{30,}", check_fake=False),  # X/Twitter app bearer
    _r("API_KEY", B + r"SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"),  # SendGrid
    _r("API_KEY", B + r"key-[0-9a-z]{32}" + E),  # Mailgun
    _r("API_KEY", B + r"[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}" + E),  # Mailgun (newer keys)
    _r("API_KEY", B + r"[0-9A-Za-z]{32}-us\d{1,2}" + E),  # Mailchimp
    _r("API_KEY", B + r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}" + E),  # Brevo
    _r("API_KEY", B + r"(?:AC|SK)[0-9a-fA-F]{32}" + E),  # Twilio
    _r("STRIPE_KEY", B + r"(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,}" + E),  # pk_…: publishable, meant for the page
    _r("API_KEY", B + r"sq0[a-z]{3}-[0-9A-Za-z_\-]{22,}"),  # Square
    _r("API_KEY", r"access_token\$production\$[0-9a-z]{16}\$[0-9a-f]{32}"),  # PayPal Braintree
    _r("API_KEY", B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + E),  # Shopify
    _r("STRIPE_KEY", B + r"whsec_[A-Za-z0-9]{32,}" + E),  # Stripe webhook signing secret
    _r("API_KEY", B + r"duffel_(?:test|live)_[A-Za-z0-9_\-=]{43}" + E),
    _r("API_KEY", B + r"EZ[AT]K[A-Za-z0-9]{54}" + E),  # EasyPost
    _r("API_KEY", B + r"FLW(?:SECK|PUBK)(?:_TEST)?-[a-h0-9]{32}-X" + E),  # Flutterwave
    _r("API_KEY", B + r"FLWSECK(?:_TEST)?-[a-h0-9]{12}" + E),  # Flutterwave encryption key
    _r("API_KEY", B + r"shippo_(?:live|test)_[a-f0-9]{40}" + E),
    # --- AI and developer SaaS
    _r(
        "API_KEY", B + r"sk-(?:proj-|svcacct-|admin-|ant-(?:api|admin)\d\d-)?[A-Za-z0-9_\-]{20,}"
    ),  # OpenAI, Anthropic, DeepSeek
    _r("API_KEY", B + r"gsk_[A-Za-z0-9]{20,}" + E),  # Groq
    _r("API_KEY", B + r"xai-[A-Za-z0-9]{20,}" + E),
    _r("API_KEY", B + r"pplx-[A-Za-z0-9]{20,}" + E),  # Perplexity
    _r("API_KEY", B + r"hf_(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{30,}" + E),  # Hugging Face
    _r("API_KEY", B + r"api_org_[A-Za-z0-9]{30,}" + E),  # Hugging Face organisation
    _r("API_KEY", B + r"tvly-(?:dev-|prod-)?[A-Za-z0-9]{24,}" + E),  # Tavily
    _r("API_KEY", B + r"tgp_v1_[A-Za-z0-9_\-]{30,}"),  # Together AI
    _r("API_KEY", B + r"llx-[A-Za-z0-9_\-]{40,}"),  # LlamaCloud
    _r("API_KEY", B + r"LLM\|\d+\|[A-Za-z0-9_\-]{20,}"),  # Meta Llama API
    _r("API_KEY", B + r"lin_api_[A-Za-z0-9]{40}" + E),  # Linear
    _r("API_KEY", B + r"(?:ntn|secret)_[A-Za-z0-9]{43,}" + E),  # Notion
    _r("API_KEY", B + r"figd_[A-Za-z0-9_\-]{40,}"),  # Figma
    _r("API_KEY", B + r"sntry[su]_[A-Za-z0-9_=\-]{40,}"),  # Sentry
    _r("API_KEY", B + r"ph[acx]_[A-Za-z0-9]{39,}" + E),  # PostHog
    _r("API_KEY", B + r"NR(?:AK|II|IQ|JS|RA|AA|SP)-[A-Za-z0-9_\-]{19,}"),  # New Relic (browser keys: 19)
    _r("API_KEY", B + r"[a-f0-9]{36}NRAL" + E),  # New Relic licence key
    _r("API_KEY", B + r"PMAK-[A-Fa-f0-9]{24}-[A-Fa-f0-9]{34}" + E),  # Postman
    _r("API_KEY", B + r"PMAT-[A-Z0-9]{26}" + E),  # Postman collection access token
    _r("API_KEY", B + r"pnu_[A-Za-z0-9]{36}" + E),  # Prefect
    _r("API_KEY", B + r"pul-[a-f0-9]{40}" + E),  # Pulumi
    _r("API_KEY", B + r"rdme_[a-z0-9]{70}" + E),  # ReadMe
    _r("API_KEY", B + r"tfp_[A-Za-z0-9_\-.=]{59}" + E),  # Typeform
    _r("API_KEY", B + r"ico-[A-Za-z0-9]{32}" + E),  # Infracost
    _r("API_KEY", B + r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}" + E),  # Airtable
    _r("API_KEY", B + r"pat\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}" + E),  # Harness
    _r("API_KEY", B + r"API-[A-Z0-9]{26}" + E),  # Octopus Deploy
    _r("TOKEN", B + r"sha256~[A-Za-z0-9_\-]{43}" + E),  # OpenShift
    _r("TOKEN", B + r"fo1_[A-Za-z0-9_\-]{43}" + E),  # Fly.io
    _r("TOKEN", B + r"fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3}"),
    _r("TOKEN", B + r"sk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}"),  # Mapbox secret token
    _r("TOKEN", B + r"tk-us-[A-Za-z0-9_\-]{48}" + E),  # Scalingo
    _r("TOKEN", B + r"sm_(?:pat|aat|sat)_[A-Za-z0-9]{16}" + E),  # SettleMint
    _r("TOKEN", B + r"fio-u-[A-Za-z0-9_\-=]{64}" + E),  # Frame.io
    _r(
        "TOKEN",
        B + r"access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}"
        r"-[0-9a-f]{12}" + E,
    ),  # Plaid
    _r("API_KEY", B + r"glc_[A-Za-z0-9+/]{32,}={0,2}"),  # Grafana Cloud
    _r("API_KEY", B + r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}" + E),  # Grafana service account
    _r("API_KEY", B + r"eyJrIjoi[A-Za-z0-9+/]{30,}={0,2}"),  # Grafana provisioned key
    _r("API_KEY", B + r"cf(?:at|ut|k)_[A-Za-z0-9]{40,}" + E),  # Cloudflare
    _r("PRIVATE_KEY", B + r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}" + E),  # Cloudflare origin CA key
    _r("API_KEY", B + r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}" + E),  # Doppler
    _r("API_KEY", B + r"dnkey-[a-z0-9=_\-]{26}-[a-z0-9=_\-]{52}" + E),  # Defined Networking
    _r("API_KEY", B + r"cosmo_[a-f0-9]{32}" + E),  # WunderGraph
    _r("API_KEY", B + r"wx[a-f0-9]{16}" + E),  # WeChat app id
    _r("TOKEN", B + r"ops_eyJ[A-Za-z0-9+/=_\-]{100,}"),  # 1Password service account
    _r(
        "SECRET", B + r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}" + E
    ),
    _r("PRIVATE_KEY", B + r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}" + E),
    _r("PRIVATE_KEY", B + r"S[ACNOPUX][A-Z2-7]{54,56}" + E),  # NKEY seeds (user, account, …)
    _r("AUTH_HEADER", B + r"TlRMTVNTUAADAAAA[A-Za-z0-9+/=]{40,}"),  # NTLM authenticate message
    # BitLocker recovery key: eight groups of six digits (digits only, so runs are normal)
    _r("SECRET", B + r"\d{6}(?:-\d{6}){7}" + E, check_fake=False),
    _r("JWT", B + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"),
    _r("SECRET", r"otpauth://\S*?[?&]secret=(?P<secret>[A-Za-z2-7]{16,})", flags=re.I),  # 2FA seed
)


_AZURE_MARKER = re.compile(r"JQQJ9[9DH][A-Za-z0-9]{3,}[A-Za-z0-9+/]*={0,2}")  # AI services, storage accounts
_ALNUM_BEFORE = re.compile(r"[A-Za-z0-9]{20,60}$")


def _b64decode(text: str, *, urlsafe: bool = False) -> bytes | None:
    """Base64 (padding optional), or None when `text` is not base64."""
    padded = text + "=" * (-len(text) % 4)
    try:
        return base64.urlsafe_b64decode(padded) if urlsafe else base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return None


_B64_44 = re.compile(r"(?<![A-Za-z0-9+=])[A-Za-z0-9+/]{44}(?![A-Za-z0-9+=])")  # '/' may end a URL path part


def atlassian_pats(text: str) -> list[tuple[int, int]]:
    """Jira / Confluence Data Center personal access tokens: 44 base64 characters that decode to a
    12-digit id, ':' and 20 random bytes. Found by decoding, so a 44-character run in an image or a
    hash (which does not decode to digits and ':') is left alone."""
    spans = []
    for m in _B64_44.finditer(text):
        raw = _b64decode(m.group(0))
        if raw is not None and len(raw) == 33 and raw[:12].isdigit() and raw[12:13] == b":":
            spans.append((m.start(), m.end()))
    return spans


_GITHUB_CLASSIC = re.compile(r"gh[pousr]_([A-Za-z0-9]{30,32})([A-Za-z0-9]{6})(?![A-Za-z0-9_\-])")
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def github_checksum_ok(token: str) -> bool:
    """GitHub's 40-character tokens end in a base62 CRC32 of their random part: a token that passes is
    real-shaped even when its body looks like a pattern (ghp_000…), one that fails may still be a
    hand-made example."""
    m = _GITHUB_CLASSIC.fullmatch(token)
    if m is None:
        return False
    crc, digits = zlib.crc32(m.group(1).encode()), ""
    for _ in range(6):
        crc, r = divmod(crc, 62)
        digits = _BASE62[r] + digits
    return digits == m.group(2)


def azure_ai_keys(text: str) -> list[tuple[int, int]]:
    """Azure AI services keys: 20–60 random characters, the JQQJ99 marker, a zero-padded tail. Found by
    the marker (a regex that starts anywhere would be quadratic on long base64); only the part before
    the marker must look random, the tail is mostly 'A's."""
    spans = []
    for m in _AZURE_MARKER.finditer(text):
        head = _ALNUM_BEFORE.search(text, max(0, m.start() - 60), m.start())
        if head and starts_token(text, head.start()) and not looks_fake(head.group(0)):
            spans.append((head.start(), m.end()))
    return spans


_BASE32_SEED = re.compile(r"(?<![A-Za-z0-9_+/=.\-])(?:[A-Z2-7]{16}){1,2}(?![A-Za-z0-9_+/=\-])")
# "setup key: jbsw y3dp ehpk 3pxp" — how authenticator apps show a seed (groups of four, either case)
_GROUPED_SEED = re.compile(
    r"\b(?:setup|secret|2fa|mfa|totp|otp|authenticator)\s+(?:key|code|seed)\s*(?:is|:|=)?\s*:?\s*"
    r"(?P<seed>[A-Za-z2-7]{4}(?:[ \-]?[A-Za-z2-7]{4}){3,7})\b",
    re.I,
)


def otp_seeds(text: str) -> list[tuple[int, int]]:
    """TOTP/HOTP seeds (RFC 4648 base32, 16 or 32 characters as authenticator apps issue them): bare in
    upper case when they are random (digits 2-7 among the letters, not words, no pattern), or after
    "setup key"/"secret key" in the grouped form the apps display."""

    spans = []
    for m in _BASE32_SEED.finditer(text):
        seed = m.group(0)
        digits = sum(c.isdigit() for c in seed)
        if (
            2 <= digits <= len(seed) - 8
            and shannon_entropy(seed) >= 3.3
            and not looks_fake(seed)
            and not is_wordlike(seed)
        ):
            spans.append(m.span())
    spans.extend(m.span("seed") for m in _GROUPED_SEED.finditer(text))
    return spans


_JOSE = re.compile(r"(?<![A-Za-z0-9_\-.])eyJ[A-Za-z0-9_\-]{10,}(?:\.[A-Za-z0-9_\-]{0,4000}){2,4}(?![A-Za-z0-9_\-.])")
_BASIC = re.compile(
    r"\b[Bb]asic\s+(?P<blob>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])"
    # npm's `_auth=…`, Docker's `"auth": "…"`: the same base64 of user:password under a key
    r"|(?<![\w-])_?auth[\"']?\s*[:=]\s*[\"']?(?P<keyed>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])",
    re.I,
)
_AWS_ID = re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])")
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")  # (after `=`: a query parameter)


def _b64json(part: str) -> dict | None:
    raw = _b64decode(part, urlsafe=True)
    try:
        value = json.loads(raw) if raw else None
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


def jose_tokens(text: str) -> list[tuple[int, int]]:
    """Signed and encrypted JSON Web Tokens (JWS, JWE: 3 or 5 dotted parts) whose first part decodes to a
    JOSE header (`{"alg": …}`) — whatever the payload looks like (a JWE's is ciphertext, not `eyJ…`)."""
    spans = []
    for m in _JOSE.finditer(text):
        parts = m.group(0).split(".")
        header = _b64json(parts[0])
        if header is None or not ("alg" in header or "enc" in header) or looks_fake(m.group(0)):
            continue
        if len(parts) == 3 and _b64json(parts[1]) is not None and len(parts[2]) >= 16:
            spans.append(m.span())  # signed: the payload is JSON too (a made-up `eyJ….NiIs….NiIs…` is not)
        elif len(parts) == 5 and all(len(p) >= 8 for p in parts[3:]):
            spans.append(m.span())  # encrypted: key, iv, ciphertext, tag
    return spans


def basic_credentials(text: str) -> list[tuple[int, int]]:
    """`Basic dXNlcjpTM2NyZXQ=` anywhere (a curl header, a log line), `_auth=…` in .npmrc, `"auth": "…"` in
    Docker's config.json: the blob is base64 of user:password."""
    spans = []
    for m in _BASIC.finditer(text):
        group = "blob" if m.group("blob") else "keyed"
        try:
            raw = (_b64decode(m.group(group)) or b"").decode("utf-8")
        except UnicodeDecodeError:
            continue
        user, sep, password = raw.partition(":")
        if sep and password and raw.isprintable() and len(user) <= 256:
            spans.append(m.span(group))
    return spans


# A lone secret access key: its shape alone says little (a base64 digest is 40 characters too), so it also needs
# the entropy of 40 random characters (about 4.9 bits each; a worded path or a repeated pattern has far less)
# and no context that makes it something public: a hash, checksum or digest named just before it, a data URI,
# a path segment between slashes, a longer run of base64.
_LONE_SECRET_MIN_ENTROPY = 4.3
_PUBLIC_BEFORE = re.compile(
    r"(?:sha-?(?:1|256|384|512)?|hash|digest|checksum|integrity|etag|fingerprint|thumbprint|commit|revision|"
    r"nonce|base64|signature|sig|md5|sri)\W{0,3}$",
    re.I,
)


def _mixed(value: str) -> bool:
    return any(c.islower() for c in value) and any(c.isupper() for c in value) and any(c.isdigit() for c in value)


def _lone_secret_key(text: str, start: int, end: int) -> bool:
    value = text[start:end]
    return (
        _mixed(value)
        and shannon_entropy(value) >= _LONE_SECRET_MIN_ENTROPY
        and not looks_fake(value)
        and not is_wordlike(value)
        and not value.startswith("/")
        and not _PUBLIC_BEFORE.search(text, max(0, start - 24), start)
    )


def aws_secret_keys(text: str) -> list[tuple[int, int]]:
    """An AWS secret access key (40 base64 characters): on the same line as an access key id (the pair is how
    credentials are pasted: `AKIA… wJalr…`, a CSV row from the console), or alone when it is as random as a
    generated key and nothing around it says it is a public digest (a query parameter, a pasted value)."""
    spans = []
    for line in re.finditer(r"[^\n]+", text):
        paired = bool(_AWS_ID.search(line.group(0)))
        for m in _AWS_SECRET.finditer(line.group(0)):
            start, end = line.start() + m.start(), line.start() + m.end()
            if (_mixed(m.group(0)) and not looks_fake(m.group(0))) if paired else _lone_secret_key(text, start, end):
                spans.append((start, end))
    return spans
