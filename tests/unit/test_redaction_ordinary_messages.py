"""Ordinary help-desk messages keep every word: log timestamps, versions, reference numbers, MAC addresses,
host and device names, ids and command options are not secrets or personal data. Examples written for this
test (an over-redaction audit of ours), with the secrets a user might type beside them as controls."""

import pytest

from app.adapters.redaction import PolicyRedactor, RedactionPolicy, build_engine

KINDS = frozenset({"EMAIL", "PHONE", "CREDIT_CARD", "IBAN", "US_SSN"})


@pytest.fixture(scope="module")
def memory():
    """The session-memory policy: secrets and structured personal data (no names model to load)."""
    return PolicyRedactor(build_engine(RedactionPolicy(memory=KINDS)), KINDS, cache_size=0)


@pytest.mark.parametrize(
    "text",
    [
        # a log line's date and hour are not a phone number
        "2024-01-15 10:22:33 ERROR Connection reset by peer",
        "Timestamp: 2024-01-15 10:22:33Z",
        "Backup finished 15.01.2024 22:30:15",
        "20240115 10:22:33 sync failed",
        "Backup window 2024-01-20 22:00 to 2024-01-21 04:00",
        # versions, references and serials after the word that names them
        "Office 16.0.17328.20068 crashes on startup",
        "firmware version 02.14.08.61 for the BIOS",
        "KB number 5034441 fails",
        "ticket number 4829104 was closed",
        "case no. 12345678 with Microsoft support",
        "Webex meeting number 2634 123 4567",
        "Serial 0123-4567-8901 on the monitor",
        "part 60-56-85-91 is out of stock",
        "IMEI 356938035643809 of the company phone",
        "model 100-20-3000 docking station",
        # MAC addresses and DUIDs
        "Device MAC 00-50-56-12-34-56 is not getting a DHCP lease",
        "The MAC 00.50.56.12.34.56 is wrong in the DHCP reservation",
        # what a password is like, in other languages
        "mein Passwort ist abgelaufen",
        "Le mot de passe est expiré depuis hier",
        "la password è scaduta",
        "la contraseña es incorrecta",
        "a senha é inválida no portal",
        "Lösenord: utgånget",
        # the device, host, product or file a login is about
        "Login fails on LAPTOP-7H3K9Q2.corp.local since Monday",
        "password prompt keeps appearing after installing Office365ProPlus",
        "password reset fails on Win11Pro 23H2",
        "Printer HP-4F-East asks for a PIN to release my print job",
        "Can't sign in to AVD host pool HP-Prod-Win11-01",
        "Password-protected file Q4Report#2.docx won't open",
        "After upgrading to v2.3.1-RC1 my login fails",
        "npm package @azure/msal-browser@3.6.0 breaks the login",
        "ssh admin@Srv01-db fails",
        "Login fails unless I delete Microsoft.AAD.BrokerPlugin_cw5n1h2txyewy",
        "credentials rejected by the printer Ricoh-IMC3000-3F",
        # ids on a line about a token or auth
        "auth fails after commit 3f2a9b1c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f90 was deployed",
        "The auth request id 7f3a9c21b4e84d0e9a1b2c3d4e5f6a7b failed",
        "ProfileList key S-1-5-21-1004336348-1177238915-682003330-512.bak exists",
        "Credential Manager entry for TERMSRV/rds-gw01.corp.local is corrupt",
        "password prompt in Excel for file Budget_Q1-2024v3.xlsx",
        r"Teams 2.1 token error at %LOCALAPPDATA%\Packages\MSTeams_8wekyb3d8bbwe\LocalCache",
        "Key Container = te-WebServer-8a7b6c5d-4e3f-2a1b-0c9d-8e7f6a5b4c3d",
        # command options that take no password
        r"net use Z: \\fs01\share /user:CORP\jdoe asks for the password every time",
        r"runas /user:CORP\adm-jdoe cmd says 1326 logon failure",
        "docker login --password-stdin reads from the pipe but hangs",
        "Invoke-WebRequest -Uri https://intranet.corp.local -UseDefaultCredentials returns 401",
        r"New-PSSession -ComputerName srv-app-01 -Credential CORP\jdoe fails with Access denied",
    ],
)
def test_an_ordinary_help_desk_message_keeps_every_word(memory, text):
    assert memory.redact(text).text == text


@pytest.mark.parametrize(
    "text, secret",
    [
        ("my password is Tr0ub4dor&3x", "Tr0ub4dor&3x"),
        ("Passwort ist Sommer2024!", "Sommer2024!"),
        ("la password è Estate2024!", "Estate2024!"),
        (r"net use \\fs01\share /user:CORP\jdoe Wint3r#Share", "Wint3r#Share"),
        ("echo S3cr3t!x | docker login --password-stdin", "S3cr3t!x"),
        ("I entered Lm4!quartz88 on the login page five times", "Lm4!quartz88"),
        ("call me on +44 20 7946 0958 after 10:00", "7946 0958"),
        ("the MFA token secret is 8f3e2a1b4c5d6e7f8a9b0c1d2e3f4a5b", "8f3e2a1b4c5d6e7f8a9b0c1d2e3f4a5b"),
    ],
)
def test_the_secrets_beside_them_are_still_removed(memory, text, secret):
    assert secret not in memory.redact(text).text
