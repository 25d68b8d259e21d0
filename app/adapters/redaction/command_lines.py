"""Passwords and tokens on command lines an administrator pastes: one table, one row per tool or shape.

Each row: name, kind, pattern (the value in its `secret` group), what the value must look like, and
examples — a command line and the secret it must yield, and command lines it must leave alone. The
examples are the tests (tests/unit/test_rule_tables.py); rule_table.RuleTable runs the table, each row
only on text holding one of the literal strings its pattern starts with.
"""

from __future__ import annotations

import re

from app.adapters.redaction.code_shapes import is_word
from app.adapters.redaction.heuristics import looks_fake, looks_random
from app.adapters.redaction.rule_table import Rule, RuleTable
from app.adapters.redaction.values import clean, value_looks_like_secret, value_ok_without_connector

P = "PASSWORD"
_secret = value_looks_like_secret


def _not_a_word(value: str) -> bool:
    return value_looks_like_secret(value) and not is_word(clean(value).lower())


def _vault_token(value: str) -> bool:
    return looks_random(value.split(".")[-1]) and not looks_fake(value)


RULES = (
    # --- curl and other HTTP clients
    Rule(
        "curl -u / --user",
        P,
        re.compile(r"(?:^|\s)(?:-u|--user|--proxy-user|--auth|-a)(?:\s+|=)[\"']?[^\s:\"'$]+:(?P<secret>[^\s\"'@]+)"),
        _secret,
        finds=(
            ("curl -u alice:Zq7Lp4Wg7y9 https://api.example", "Zq7Lp4Wg7y9"),
            ("curl --user=alice:Zq7Lp4Wg7y9 https://api.example", "Zq7Lp4Wg7y9"),
        ),
        keeps=("curl -u $USER:$PASS https://api.example",),
    ),
    Rule(
        "curl -u quoted",
        P,
        re.compile(r"(?:^|\s)(?:-u|--user|--proxy-user)(?:\s+|=)?(?P<q>[\"'])[^\s:\"'$]+:(?P<secret>[^\"'\n]+)(?P=q)"),
        _secret,
        finds=(
            ('curl -u "alice:Zq7 Lp4x" https://api.example', "Zq7 Lp4x"),
            ("curl --user 'alice:Zq7!Lp4#Wg7y' https://api.example", "Zq7!Lp4#Wg7y"),
        ),
        keeps=('curl -u "alice:${PASSWORD}" https://api.example',),
    ),
    Rule(
        "curl -u glued",
        P,
        re.compile(r"\bcurl\b[^\n|;&]*?\s-u(?P<user>[^\s:\"'$\-][^\s:\"'$]*):(?P<secret>[^\s\"'@]+)"),
        _secret,
        finds=(("curl -ualice:Zq7Lp4Wg7y9 https://api.example", "Zq7Lp4Wg7y9"),),
        keeps=("curl -uadmin:password https://api.example",),
    ),
    # --- Windows
    Rule(
        "net user",
        P,
        re.compile(r"\bnet\s+user\s+(?:\"[^\"\n]+\"|[^\s/\"]+)\s+(?P<secret>[^\s/*\"][^\s\"]*)", re.I),
        _secret,
        finds=(("net user alice Zq7!Lp4 /add", "Zq7!Lp4"),),
        keeps=("net user alice * /add",),
    ),
    Rule(
        "net use",
        P,
        re.compile(r"\bnet\s+use\s+(?:[A-Z]:\s+|\*\s+)?\\\\\S+\s+(?P<secret>[^\s/*\"][^\s\"]*)", re.I),
        _secret,
        finds=(("net use Z: \\\\srv\\share Zq7!Lp4 /user:CORP\\alice", "Zq7!Lp4"),),
        keeps=("net use Z: \\\\srv\\share /persistent:yes",),
    ),
    # (not `runas /user:x cmd`, which takes no password; not "…/user:CORP\\jdoe asks for the password")
    Rule(
        "/user: then a password",
        P,
        re.compile(r"(?:^|(?<!runas)\s)/user:\S+\s+(?P<secret>[^\s/*\"][^\s\"]*)", re.I),
        _not_a_word,
        finds=(("net use \\\\srv /user:alice Zq7!Lp4", "Zq7!Lp4"),),
        keeps=("runas /user:admin cmd", "mapped with /user:CORP\\jdoe asks for the password"),
    ),
    Rule(
        "/pass: and /pw:",
        P,
        re.compile(r"(?:^|\s)/(?:pw|pwd|pass|password)[:=][\"']?(?P<secret>[^\s\"']+)", re.I),
        _secret,
        finds=(("cmdkey /add:srv /user:alice /pass:Zq7!Lp4", "Zq7!Lp4"),),
        keeps=("cmdkey /add:srv /user:alice /pass:%PW%",),
    ),
    # (not msbuild's `/p:Configuration=Release`)
    Rule(
        "mstsc and xfreerdp /p:",
        P,
        re.compile(r"(?:^|\s)/u(?:ser)?:\S+\s+(?:/\S+\s+)*?/p:[\"']?(?P<secret>[^\s\"'=]+)(?=[\s\"']|$)", re.I),
        _secret,
        finds=(("xfreerdp /u:admin /v:srv /p:Zq7!Lp4", "Zq7!Lp4"),),
        keeps=("msbuild /u:x /p:Configuration=Release",),
    ),
    Rule(
        "schtasks /RP and /P",
        P,
        re.compile(r"\bschtasks\b[^\n|;&]*?\s/R?P\s+[\"']?(?P<secret>[^\s\"'/*][^\s\"']*)", re.I),
        _secret,
        finds=(("schtasks /create /tn backup /ru svc /rp Zq7!Lp4", "Zq7!Lp4"),),
        keeps=("schtasks /query /fo LIST",),
    ),
    # --- database clients
    Rule(
        "SQL Server and IPMI -P",
        P,
        re.compile(r"\b(?:sqlcmd|bcp|osql|isql|ipmitool)\b[^\n|;&]*?\s-P\s*[\"']?(?P<secret>[^\s\"'\-][^\s\"']*)"),
        _secret,
        finds=(("sqlcmd -S db -U sa -P Zq7!Lp4", "Zq7!Lp4"),),
        keeps=("sqlcmd -S db -E",),
    ),
    Rule(
        "Oracle user/password",
        P,
        re.compile(
            r"\b(?:sqlplus|connect|conn|exp|imp|expdp|impdp|rman\s+target)\s+(?:-[sSlL]\s+)?"
            r"[\"']?[A-Za-z_][\w$#]{0,30}/(?P<secret>[^\s@/\"']{3,})(?=@|[\s\"']|$)",
            re.I,
        ),
        _secret,
        finds=(("sqlplus scott/T1ger#9@orcl", "T1ger#9"),),
        keeps=("sqlplus / as sysdba",),
    ),
    Rule(
        "redis-cli -a",
        P,
        re.compile(r"\bredis-cli\b[^\n]*?\s-a\s+[\"']?(?P<secret>[^\s\"']+)"),
        _secret,
        finds=(("redis-cli -h cache -a Zq7!Lp4 ping", "Zq7!Lp4"),),
        keeps=("redis-cli -h cache ping",),
    ),
    Rule(
        "Redis AUTH",
        P,
        re.compile(r"^[ \t>]*(?:\d+\)\s*)?AUTH\s+(?:[\w\-]+\s+)?[\"']?(?P<secret>[^\s\"']+)[\"']?[ \t]*$", re.M),
        value_ok_without_connector,
        finds=(("AUTH Zq7!Lp4", "Zq7!Lp4"), ("> AUTH default Zq7!Lp4", "Zq7!Lp4")),
        keeps=("AUTH required",),
    ),
    Rule(
        "Redis requirepass",
        P,
        re.compile(r"^[ \t]*(?:requirepass|masterauth)\s+[\"']?(?P<secret>[^\s\"']+)", re.M),
        _secret,
        finds=(("requirepass Zq7!Lp4", "Zq7!Lp4"),),
        keeps=('requirepass ""',),
    ),
    # --- Unix tools
    Rule(
        "sshpass -p",
        P,
        re.compile(r"\bsshpass\s+-p\s*[\"']?(?P<secret>[^\s\"']+)"),
        _secret,
        finds=(("sshpass -p Zq7!Lp4 ssh admin@srv", "Zq7!Lp4"),),
        keeps=("sshpass -e ssh admin@srv",),
    ),
    Rule(
        "smbclient -U user%password",
        P,
        re.compile(r"(?:^|\s)-U\s+[\"']?[^\s%\"']+%(?P<secret>[^\s\"']+)"),
        _secret,
        finds=(("smbclient //srv/share -U alice%Zq7!Lp4", "Zq7!Lp4"),),
        keeps=("smbclient //srv/share -U alice",),
    ),
    Rule(
        "openssl -passin pass:",
        P,
        re.compile(r"-pass(?:in|out)?\s+[\"']?pass:(?P<secret>[^\s\"']+)"),
        _secret,
        finds=(("openssl rsa -in k.pem -passin pass:Zq7!Lp4", "Zq7!Lp4"),),
        keeps=("openssl rsa -passin env:PW",),
    ),
    Rule(
        "htpasswd -nb",
        P,
        re.compile(r"\bhtpasswd\s+-(?=[A-Za-z]*b)(?=[A-Za-z]*n)[A-Za-z]+\s+\S+\s+[\"']?(?P<secret>[^\s\"']+)"),
        _secret,
        finds=(("htpasswd -nb alice Zq7!Lp4", "Zq7!Lp4"),),
        keeps=("htpasswd -n alice",),
    ),
    Rule(
        "htpasswd -b file",
        P,
        re.compile(r"\bhtpasswd\s+-(?=[A-Za-z]*b)(?![A-Za-z]*n)[A-Za-z]+\s+\S+\s+\S+\s+[\"']?(?P<secret>[^\s\"']+)"),
        _secret,
        finds=(("htpasswd -b .htpasswd alice Zq7!Lp4", "Zq7!Lp4"),),
        keeps=("htpasswd .htpasswd alice",),
    ),
    Rule(
        "LDAP tools -w",
        P,
        re.compile(r"\bldap\w*\b[^\n]*?\s-w\s+[\"']?(?P<secret>[^\s\"']+)"),
        _secret,
        finds=(("ldapsearch -D cn=admin,dc=corp -w Zq7!Lp4 -b dc=corp", "Zq7!Lp4"),),
        keeps=("ldapsearch -D cn=admin,dc=corp -W",),
    ),
    Rule(
        "echo into --password-stdin",
        P,
        re.compile(r"\becho\s+(?:-n\s+)?[\"']?(?P<secret>[^\s\"'|]+)[\"']?\s*\|[^\n]*--password-stdin"),
        _secret,
        finds=(("echo Zq7!Lp4 | docker login -u alice --password-stdin", "Zq7!Lp4"),),
        keeps=("echo $TOKEN | docker login -u alice --password-stdin",),
    ),
    Rule(
        "echo into chpasswd",
        P,
        re.compile(r"\becho\s+(?:-e\s+)?[\"']?[^\s:\"']+:(?P<secret>[^\s\"'|]+)[\"']?\s*\|\s*(?:sudo\s+)?chpasswd"),
        _secret,
        finds=(("echo 'bob:Zq7!Lp4' | sudo chpasswd", "Zq7!Lp4"),),
        keeps=('echo "bob:$PW" | chpasswd',),
    ),
    Rule(
        "echo into sudo -S",
        P,
        re.compile(r"\becho\s+(?:-n\s+)?[\"']?(?P<secret>[^\s\"'|]+)[\"']?\s*\|\s*sudo\s+(?:-\w+\s+)*-\w*S\b"),
        _secret,
        finds=(("echo 'Zq7!Lp4' | sudo -S apt update", "Zq7!Lp4"),),
        keeps=("echo done | sudo tee /tmp/x",),
    ),
    Rule(
        "7z and rar -p",
        P,
        re.compile(r"\b(?:7z|7za|unrar|rar)\b[^\n|;&]*?\s-p(?P<secret>[^\s\"'\-][^\s\"']{2,})"),
        _secret,
        finds=(("7z a backup.7z -pZq7!Lp4 docs/", "Zq7!Lp4"),),
        keeps=("7z a backup.7z -p docs/",),
    ),
    Rule(
        "zip -P",
        P,
        re.compile(r"\b(?:zip|unzip|zipcloak)\b[^\n|;&]*?\s-P\s+[\"']?(?P<secret>[^\s\"'\-][^\s\"']*)"),
        _secret,
        finds=(("zip -P Zq7!Lp4 secret.zip notes.txt", "Zq7!Lp4"),),
        keeps=("zip -r docs.zip docs",),
    ),
    Rule(
        "ssh-keygen -N / -P",
        P,
        re.compile(r"\bssh-keygen\b[^\n|;&]*?\s-[NP]\s+[\"'](?P<secret>[^\"'\n]{3,})[\"']"),
        _secret,
        finds=(("ssh-keygen -t ed25519 -N 'Zq7!Lp4 horse'", "Zq7!Lp4 horse"),),
        keeps=("ssh-keygen -t ed25519 -N ''",),
    ),
    Rule(
        "vault login",
        "TOKEN",
        re.compile(r"\bvault\s+login\s+(?:-\w+(?:=\S+)?\s+)*(?P<secret>[A-Za-z0-9._\-]{20,})(?![\w=])"),
        _vault_token,
        finds=(("vault login hvs.Q8zR3lMn0PX7vB2kT9wY4cH6", "hvs.Q8zR3lMn0PX7vB2kT9wY4cH6"),),
        keeps=("vault login -method=oidc",),
    ),
    # --- Windows Wi-Fi and network gear
    Rule(
        "netsh Key Content",
        P,
        re.compile(r"\bkey\s+content[ \t]*:[ \t]*(?P<secret>\S[^\n]*?)[ \t]*$", re.I | re.M),
        _secret,
        finds=(("    Key Content            : Zq7!Lp4 horse", "Zq7!Lp4 horse"),),
        keeps=("    Key Content            : ********",),
    ),
    # hashed types (5, 8, 9: `$1$…`) are left, as hashes are elsewhere
    Rule(
        "enable secret",
        P,
        re.compile(
            r"^[ \t]*enable\s+(?:secret|password)\s+(?:(?:level\s+\d+\s+)?[05]\s+)?(?P<secret>\S+)", re.I | re.M
        ),
        _secret,
        finds=(("enable secret Zq7!Lp4", "Zq7!Lp4"),),
        keeps=("enable secret 5 $1$mERr$hx5rVt7rPNoS4wqbXKX7m0",),
    ),
    Rule(
        "type 7 (reversible)",
        P,
        re.compile(r"\b(?:password|secret|key|key-string|pre-shared-key|community)\s+7\s+(?P<secret>[0-9A-F]{4,})\b"),
        finds=(("username admin password 7 0822455D0A16", "0822455D0A16"),),
        keeps=("password 7 days",),
    ),
    Rule(
        "type 0 (clear)",
        P,
        re.compile(r"\b(?:password|secret|key|key-string)\s+0\s+(?P<secret>\S+)"),
        _secret,
        finds=(("username admin secret 0 Zq7!Lp4", "Zq7!Lp4"),),
        keeps=("password 0 of 3",),
    ),
    Rule(
        "SNMP community",
        P,
        re.compile(r"\bsnmp-server\s+community\s+(?P<secret>\S+)", re.I),
        _secret,
        finds=(("snmp-server community Zq7Lp4net RO", "Zq7Lp4net"),),
        keeps=("snmp-server community <string> RO",),
    ),
    Rule(
        "RADIUS and TACACS key",
        P,
        re.compile(
            r"\b(?:tacacs-server|radius-server|tacacs|radius)\b[^\n]*?\bkey\s+(?:0\s+)?(?P<secret>[^\s7]\S*)", re.I
        ),
        _secret,
        finds=(("radius-server host 10.0.0.5 key Zq7!Lp4", "Zq7!Lp4"),),
        keeps=("radius-server key 7 0822455D0A16",),
    ),
    Rule(
        "pre-shared key",
        P,
        re.compile(
            r"\b(?:pre-shared-key|key-string|wpa-psk)\s+(?:ascii\s+|hex\s+|address\s+\S+\s+key\s+)?"
            r"(?:0\s+)?(?P<secret>[^\s7]\S*)",
            re.I,
        ),
        _secret,
        finds=(("wpa-psk ascii Zq7!Lp4", "Zq7!Lp4"),),
        keeps=("pre-shared-key 7 0822455D0A16",),
    ),
)

COMMAND_LINES = RuleTable(RULES, source="chat_rules")
