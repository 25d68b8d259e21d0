"""Every secret rule, on examples written for these tests (none taken from the benchmark data)."""

import pytest

from app.adapters.redaction.detect_secrets_plugins import DetectSecretsPlugins
from app.adapters.redaction.engine import TRUNCATION_NOTICE, PolicyRedactor, RedactionEngine
from app.adapters.redaction.spans import PLACEHOLDER
from app.adapters.redactor import PatternRedactor

redactor = PatternRedactor()


def removed(text: str, secret: str, kind: str) -> None:
    result = redactor.redact(text)
    assert secret not in result.text, result.text
    assert kind in result.kinds, (result.text, result.kinds)


# --- what people type in chat -------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, secret",
    [
        ("my password is Tulip#Garden7", "Tulip#Garden7"),
        ("My new password would be: Gr33nTea!", "Gr33nTea!"),
        ("the wifi password is still sunflower99", "sunflower99"),
        ("pw: K9$mLp2q", "K9$mLp2q"),
        ("password=Quartz-Lamp-41", "Quartz-Lamp-41"),
        ("Passwort ist Blume!2024", "Blume!2024"),
        ("i typed pwd 7hunder&Rain but it says wrong", "7hunder&Rain"),
        ("Winter2024! is my password, is that too weak?", "Winter2024!"),
        ("ID/PW: jsmith/Mango+Fig33", "Mango+Fig33"),
        ("my passphrase is correct-horse-battery-77", "correct-horse-battery-77"),
        ("il mio password è Luna8899", "Luna8899"),
        ("a minha senha é Gato#4455", "Gato#4455"),
        ("mitt lösenord är Sol!2024x", "Sol!2024x"),
        ("passordet mitt er Fjell99!x", "Fjell99!x"),
        ("moje hasło: Kot#7781", "Kot#7781"),
        ("heslo je Pes-Kocka12", "Pes-Kocka12"),
    ],
)
def test_a_password_typed_in_a_sentence_is_removed(text, secret):
    removed(text, secret, "PASSWORD")


@pytest.mark.parametrize(
    "text, secret",
    [
        ("PIN 4821 for the printer", "4821"),
        ("my pin is 90210", "90210"),
        ("the door PIN code: 7391", "7391"),
    ],
)
def test_a_pin_is_removed(text, secret):
    removed(text, secret, "PASSWORD")


@pytest.mark.parametrize(
    "text",
    [
        "How do I reset my password?",
        "my password expired this morning",
        "my password is wrong apparently",
        "the password policy says 12 characters",
        "I forgot my PIN",
        "password manager keeps asking to save it",
        "the PIN pad on the printer is broken",
        "pw reset link never arrived",
        "my password is not working since the update",
        "What's the password requirement for the VPN?",
        # file names in log lines are not `key: value` pairs
        "skipped kb/password-reset.md: password-reset.md took longer than 5 s to read",
        "refused bitlocker-recovery-key.pdf: bitlocker-recovery-key.pdf is not a PDF",
    ],
)
def test_ordinary_sentences_about_passwords_are_left_alone(text):
    assert redactor.redact(text).text == text


# --- pasted configuration and commands ------------------------------------------------------------
@pytest.mark.parametrize(
    "text, secret, kind",
    [
        ("DB_PASSWORD=Xq8!vRz2@pLm", "Xq8!vRz2@pLm", "PASSWORD"),
        ('export MAIL_API_KEY="kz8Qw2Lr9Tx4Vb6N"', "kz8Qw2Lr9Tx4Vb6N", "API_KEY"),
        ("SESSION_SECRET: f1dd3r-Wobble-88", "f1dd3r-Wobble-88", "SECRET"),
        ('{"clientSecret": "Tq7.Lm3~Vx9-Zr2"}', "Tq7.Lm3~Vx9-Zr2", "SECRET"),
        ("smtp.password = Postbox77!", "Postbox77!", "PASSWORD"),
        ("<password>Hunter2Hunter2</password>", "Hunter2Hunter2", "PASSWORD"),
    ],
)
def test_env_and_config_lines_lose_their_secret_values(text, secret, kind):
    removed(text, secret, kind)


def test_a_multi_line_env_paste_keeps_the_harmless_lines():
    text = "DB_HOST=db.corp.example\nDB_PASSWORD=Xq8!vRz2@pLm\nDEBUG=true"
    assert redactor.redact(text).text == "DB_HOST=db.corp.example\nDB_PASSWORD=[REDACTED:PASSWORD]\nDEBUG=true"


@pytest.mark.parametrize(
    "text, secret",
    [
        ("Server=tcp:sql01.corp;Database=hr;User Id=svc_hr;Password=Wint3r#2024;", "Wint3r#2024"),
        ("jdbc:sqlserver://db.corp:1433;databaseName=hr;user=svc_hr;password=Wint3r#2024;", "Wint3r#2024"),
        (
            "DefaultEndpointsProtocol=https;AccountName=files01;AccountKey=c2VjcmV0a2V5Zm9yc3RvcmFnZWFjY291bnQwMTIzNDU2Nzg5YWJjZGVm==;",
            "c2VjcmV0a2V5Zm9yc3RvcmFnZWFjY291bnQwMTIzNDU2Nzg5YWJjZGVm==",
        ),
    ],
)
def test_connection_strings_lose_their_password_or_key(text, secret):
    result = redactor.redact(text)
    assert secret not in result.text and result.changed


@pytest.mark.parametrize(
    "text, secret, kind",
    [
        ("postgres://app:s3cretpw@db.internal:5432/x", "s3cretpw", "URL_CREDENTIALS"),
        ("mongodb+srv://admin:S3cr3tPass@cluster0.corp.example/test", "S3cr3tPass", "URL_CREDENTIALS"),
        ("https://files.corp.example/share?sig=Zk3mQ9rT2vX8pL4w&se=2025", "Zk3mQ9rT2vX8pL4w", "TOKEN"),
    ],
)
def test_credentials_inside_urls_are_removed_and_the_host_kept(text, secret, kind):
    result = redactor.redact(text)
    assert secret not in result.text and kind in result.kinds
    assert ("db.internal" in result.text) or ("cluster0" in result.text) or ("files.corp.example" in result.text)


@pytest.mark.parametrize(
    "text, secret, kind",
    [
        ("curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZA=='", "dXNlcjpwYXNzd29yZA==", "AUTH_HEADER"),
        ("Authorization: Bearer mF_9.B5f-4.1JqM", "mF_9.B5f-4.1JqM", "AUTH_HEADER"),
        (
            'Proxy-Authorization: Digest username="bob", response="6629fae49393a05397450978507c4ef1"',
            "6629fae49393a05397450978507c4ef1",
            "AUTH_HEADER",
        ),
        ("x-api-key: 7f3d9a2b8c1e4f60", "7f3d9a2b8c1e4f60", "AUTH_HEADER"),
        ("Cookie: JSESSIONID=8F3A2B1C9D0E; theme=dark", "8F3A2B1C9D0E", "AUTH_HEADER"),
        ("curl -u jdoe:Passw0rd! https://jira.corp/rest/api/2/issue", "Passw0rd!", "PASSWORD"),
        ("mysql -u root --password Tr1cky$ql", "Tr1cky$ql", "PASSWORD"),
        ("ALTER USER 'app'@'%' IDENTIFIED BY 'N3wP@ssword';", "N3wP@ssword", "PASSWORD"),
        ('$pw = ConvertTo-SecureString "Pl@inText9" -AsPlainText -Force', "Pl@inText9", "PASSWORD"),
    ],
)
def test_headers_and_commands_lose_their_credentials(text, secret, kind):
    removed(text, secret, kind)


def test_a_jwt_inside_an_authorization_header_is_one_jwt():
    token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJqc21pdGgiLCJyb2xlIjoiaXQifQ.kY2m4Pq8Xr1Ls9Tn3Vb7Hc0Jd5Fw6Ga2"
    result = redactor.redact(f"Authorization: Bearer {token}")
    assert result.text == "Authorization: Bearer [REDACTED:JWT]"


# --- vendor tokens ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "secret, kind",
    [
        ("AKIA2E0A8F3B244C9986", "AWS_KEY"),
        ("ghp_R8mZq2Lk9Xw4Tn7Vb3Hc6Jd1Fs5Gp0Ya2Ue8", "GITHUB_TOKEN"),
        ("github_pat_11AQ7ZK3Y0mR8pW2tL5xN9_v4HcJ6sD1fG8kB3nM7qT2wE5rY9uI0oP4aS6dF1gH3jK8lZ2xC7vB", "GITHUB_TOKEN"),
        ("glpat-Xq2Lm9Tz4Rk8Vb1Nw7Pc", "GITLAB_TOKEN"),
        ("xoxb-2931847561-7264910385-Qm8Lk2Xz9Rw4Tn1Vb6Hc3Jd", "SLACK_TOKEN"),
        ("sk_live_51Hq8Lm2Xz9Rw4Tn1Vb6Hc3Jd", "STRIPE_KEY"),
        ("sk-proj-Xb3kLm9Qw2Er5Ty8Ui1Op4As7Df0Gh3Jk6Lz", "API_KEY"),
        ("gsk_Qm8Lk2Xz9Rw4Tn1Vb6Hc3Jd7Fs5Gp0Ya", "API_KEY"),
        ("AIzaSyD3kLm9Qw2Er5Ty8Ui1Op4As7Df0Gh3Jk6", "API_KEY"),
        ("hf_QmLkXzRwTnVbHcJdFsGpYaUeIoPwQrMtZnBc", "API_KEY"),
        ("AbC8Q~xY2.zW3-vU4_tS5rQ6pO7nM8lK9jI0hG", "AZURE_KEY"),
    ],
)
def test_vendor_tokens_are_removed_wherever_they_appear(secret, kind):
    removed(f"the build log shows {secret} in line 3", secret, kind)


@pytest.mark.parametrize(
    "text",
    [
        "the docs use AKIAIOSFODNN7EXAMPLE as the access key",
        "token ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx is the placeholder",
        "sk_test_1234567890abcdefghijklmn in the tutorial",
    ],
)
def test_documentation_example_tokens_are_not_secrets(text):
    assert redactor.redact(text).text == text


@pytest.mark.parametrize(
    "text",
    [
        "DB_PASSWORD=${DB_PASSWORD}",
        "password: <your password here>",
        "the field shows password: ********",
        'password = os.getenv("DB_PASS")',
        "commit 8f2d3c1b9a7e6f5d4c3b2a1f0e9d8c7b6a5f4e3d broke the build",
        "request id 3f2b8c1e-9d4a-4b6f-8e2c-1a7d5f9b3c0e failed",
        "C:\\Users\\jsmith\\AppData\\Local\\Microsoft\\Teams\\current\\Teams.exe",
    ],
)
def test_templates_code_references_and_ids_are_left_alone(text):
    assert redactor.redact(text).text == text


def test_a_random_string_counts_as_a_secret_only_with_a_keyword_before_it():
    value = "8d7f6a5c4b3e2d1f0a9b8c7d6e5f4a3b"
    assert redactor.redact(f"the signature was {value}").text == "the signature was [REDACTED:SECRET]"
    assert redactor.redact(f"checksum {value} matches").text == f"checksum {value} matches"


# --- private keys ---------------------------------------------------------------------------------
KEY_BODY = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\nabc/def=="


def test_a_private_key_block_is_one_secret():
    text = f"here:\n-----BEGIN RSA PRIVATE KEY-----\n{KEY_BODY}\n-----END RSA PRIVATE KEY-----\nthanks"
    result = redactor.redact(text)
    assert "MIIEow" not in result.text and "abc/def" not in result.text
    assert result.text == "here:\n[REDACTED:PRIVATE_KEY]\nthanks"


def test_a_private_key_pasted_without_its_end_line_is_removed_to_the_end():
    result = redactor.redact(f"my key starts like this -----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_BODY}")
    assert result.text == "my key starts like this [REDACTED:PRIVATE_KEY]"


# --- placeholders, overlaps, bounds -------------------------------------------------------------------
def test_the_same_email_gets_the_same_number_and_different_ones_differ():
    result = redactor.redact("cc a@x.io, b@x.io and a@x.io again")
    assert result.text == "cc [REDACTED:EMAIL_1], [REDACTED:EMAIL_2] and [REDACTED:EMAIL_1] again"


def test_numbering_continues_after_placeholders_already_in_the_text():
    result = redactor.redact("earlier [REDACTED:EMAIL_1] now carol@x.io")
    assert result.text == "earlier [REDACTED:EMAIL_1] now [REDACTED:EMAIL_2]"


@pytest.mark.parametrize(
    "text",
    [
        "my password is Tulip#Garden7 and mail me at jane@corp.example",
        "Authorization: Bearer mF_9.B5f-4.1JqM\nDB_PASSWORD=Xq8!vRz2@pLm",
        "postgres://app:s3cretpw@db.internal:5432/x",
        f"-----BEGIN RSA PRIVATE KEY-----\n{KEY_BODY}\n-----END RSA PRIVATE KEY-----",
    ],
)
def test_redacting_redacted_text_changes_nothing(text):
    once = redactor.redact(text).text
    assert redactor.redact(once).text == once
    assert not redactor.redact(once).changed


def test_placeholders_name_the_kind_and_secrets_are_not_numbered():
    result = redactor.redact("pw: K9$mLp2q, token ghp_R8mZq2Lk9Xw4Tn7Vb3Hc6Jd1Fs5Gp0Ya2Ue8")
    assert [m.group(0) for m in PLACEHOLDER.finditer(result.text)] == ["[REDACTED:PASSWORD]", "[REDACTED:GITHUB_TOKEN]"]
    assert [f.placeholder for f in result.findings] == ["[REDACTED:PASSWORD]", "[REDACTED:GITHUB_TOKEN]"]


def test_text_beyond_the_limit_is_cut_not_passed_on_unchecked():
    engine = RedactionEngine(redactor.engine.secret_detectors, redactor.engine.pii_detectors, max_chars=1000)
    text = "x " * 600 + "pw: K9$mLp2q"
    bounded = engine.bounded(text)
    assert len(bounded) < len(text) and "K9$mLp2q" not in bounded
    assert bounded.endswith(TRUNCATION_NOTICE.format(n=f"{len(text) - 999:,}")) or "more characters removed" in bounded


def test_a_message_with_nothing_sensitive_skips_the_detectors():
    calls = []
    engine = RedactionEngine([lambda text: calls.append(text) or []], max_chars=1000)
    from app.adapters.redaction.engine import PolicyRedactor

    quiet = PolicyRedactor(engine)
    assert quiet.redact("How do I connect to the VPN on my Mac?").text == "How do I connect to the VPN on my Mac?"
    assert calls == []
    quiet.redact("my pin is 4821")
    assert calls == ["my pin is 4821"]


# --- detect-secrets' plugins ------------------------------------------------------------------------
def test_detect_secrets_plugins_run_on_text_without_files_or_verification():
    plugins = DetectSecretsPlugins()
    assert "AWSKeyDetector" in plugins.names and "IPPublicDetector" not in plugins.names
    text = 'aws_access_key_id = "AKIA2E0A8F3B244C9986"\nslack = "xoxb-2931847561-7264910385-Qm8Lk2Xz9Rw4Tn1Vb6Hc3Jd"'
    kinds = {span.kind for span in plugins.find(text)}
    assert {"AWS_KEY", "SLACK_TOKEN"} <= kinds


def test_detect_secrets_high_entropy_strings_need_a_keyword_on_the_line():
    plugins = DetectSecretsPlugins()
    random = "Zk3mQ9rT2vX8pL4wYh6NcB1sFd7Gj0Ue"
    assert plugins.find(f'checksum = "{random}"') == []
    assert [s.kind for s in plugins.find(f'signing_secret = "{random}"')] != []


# --- config and code shapes ------------------------------------------------------
def _github_token(body: str) -> str:
    import zlib

    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    crc, digits = zlib.crc32(body.encode()), ""
    for _ in range(6):
        crc, r = divmod(crc, 62)
        digits = alphabet[r] + digits
    return f"ghp_{body}{digits}"


@pytest.mark.parametrize(
    "text, secret, kind",
    [
        ('#define SMTP_PASSWORD "Kq7!mWz2pL"', "Kq7!mWz2pL", "PASSWORD"),
        ("the password for svc_backup: Rv8#tLq2", "Rv8#tLq2", "PASSWORD"),
        ("aes_key = 'Zr4Tq9Lm2Xv8Pw3Nk7Hb'", "Zr4Tq9Lm2Xv8Pw3Nk7Hb", "API_KEY"),
        ("nonce = 'q8v3m1x9t4k2z7p5w6r0'", "q8v3m1x9t4k2z7p5w6r0", "API_KEY"),
        ("wrapped = 'Hq3Zt8Lm1Xw6Pv9Rk2Nb\\", "Hq3Zt8Lm1Xw6Pv9Rk2Nb", None),
    ],
)
def test_secrets_in_code_and_config_shapes_are_removed(text, secret, kind):
    result = redactor.redact(text)
    if kind is None:  # not every shape is a secret: a random string needs a key-like name
        assert result.text == text
        return
    assert secret not in result.text, result.text
    assert kind in result.kinds, (result.text, result.kinds)


def test_a_random_string_continued_on_the_next_line_is_removed_after_a_key_name():
    removed("key_part = 'Hq3Zt8Lm1Xw6Pv9Rk2Nb\\\n  Wt5'", "Hq3Zt8Lm1Xw6Pv9Rk2Nb", "API_KEY")


def test_a_github_token_with_a_valid_checksum_is_removed_even_when_it_looks_patterned():
    token = _github_token("0" * 29 + "7")
    removed(f"token {token} in the CI log", token, "GITHUB_TOKEN")
    forged = token[:-6] + "AAAAAA"  # same body, wrong checksum: a hand-made example
    assert redactor.redact(f"see {forged}").text == f"see {forged}"


def test_a_jira_personal_access_token_is_found_by_its_decoded_shape():
    import base64

    pat = base64.b64encode(b"482019375561:" + bytes(range(7, 27))).decode()
    removed(f"curl -s https://jira.corp.example/rest/api/2/myself/{pat}", pat, "API_KEY")
    other = base64.b64encode(b"not an id, just thirty-three bytes").decode()[:44]
    assert redactor.redact(f"blob {other}").text == f"blob {other}"


@pytest.mark.parametrize(
    "text",
    [
        "password: <DB admin password>",  # a placeholder with spaces
        '<password name="password">',  # an attribute, not a value
        'user_password: "$6$rounds=5000$Xy$abcdefgh"',  # a crypt(3) hash
        "db_password: ENC[AES256_GCM,data:Zm9v,iv:YmFy]",  # encrypted at rest (sops)
        'password = "reset_password_flow"',  # a snake_case identifier
        "#define PASSWORD_BYTES {0x41, 0x42, 0x43}",  # a byte-array literal
        'sort_key = "created_at"',  # a key name with a plain value
        "the monkey ate 8d7f6a5c4b3e2d1f0a9b",  # 'key' inside a word is not a keyword
        'salt = "$hal$1te$Qw3Er5Ty7Ui9Op1As"',  # crypt-style salt, not a random token
        'password = creds["password"]',  # a lookup in code, not a value
        "token = cfg[:token]",
        "password: /run/secrets/db_password",  # where the secret is kept, not the secret
        r"ssl_key_password: C:\keys\server.pfx",
    ],
)
def test_placeholders_hashes_identifiers_and_literals_are_not_secrets(text):
    assert redactor.redact(text).text == text


@pytest.mark.parametrize(
    "text",
    [
        "reset your password in Settings > Accounts",
        "the token expired, how do I get a new one?",
        "Password for Outlook: it keeps asking me again",
        "KB-1042: To change your password, open the self-service portal and choose Reset.",
        "my api key stopped working after the update",
    ],
)
def test_it_support_prose_about_credentials_is_left_alone(text):
    assert redactor.redact(text).text == text


def test_an_email_address_after_a_key_name_is_not_a_key():
    result = redactor.redact('"key": "m4Rq8vTz2LpX@mail.example.org"')
    assert result.kinds == ["EMAIL"], result  # personal data, not an API key


# --- admin commands people paste from a terminal ---------------------------------------------------
@pytest.mark.parametrize(
    "text, secret",
    [
        ("net user jdoe Welc0me!2024 /add", "Welc0me!2024"),
        (r"net use Z: \\fs01\finance Wint3r#24 /user:CORP\jdoe", "Wint3r#24"),
        (r"net use \\fs01\finance /user:CORP\jdoe Wint3r#24", "Wint3r#24"),
        ("cmdkey /add:fs01 /user:CORP\\jdoe /pass:Wint3r#24", "Wint3r#24"),
        ("mysql -h db01 -u report -pR3port!ng hr", "R3port!ng"),
        ("sshpass -p Tr0ub4dor ssh admin@10.1.2.3", "Tr0ub4dor"),
        (r"psexec \\pc042 -u CORP\admin -p Adm1n!x cmd", "Adm1n!x"),
        ("smbclient //fs01/finance -U jdoe%Wint3r#24", "Wint3r#24"),
        ("openssl pkcs12 -export -in a.crt -inkey a.key -passout pass:Exp0rt!9 -out a.p12", "Exp0rt!9"),
        ("htpasswd -nb jdoe Wint3r#24", "Wint3r#24"),
        ("htpasswd -bc /etc/nginx/.htpasswd jdoe Wint3r#24", "Wint3r#24"),
        ("    Key Content            : BlueFalcon2024", "BlueFalcon2024"),
    ],
)
def test_passwords_in_admin_commands_and_their_output_are_removed(text, secret):
    removed(text, secret, "PASSWORD")


@pytest.mark.parametrize(
    "text",
    [
        "net user jdoe /domain",
        "net user jdoe *",  # `*` asks for the password
        r"net use Z: \\fs01\finance /persistent:yes",
        "msbuild app.sln /p:Configuration=Release",
        "mysql -u root -p hr",  # a lone -p asks; `hr` is the database
        "docker run -u 1000 -p 8080:80 nginx",  # -p publishes a port
        "ssh -p 2222 bastion.corp.example",
        "git log -p --stat",
    ],
)
def test_commands_without_a_password_in_them_are_left_alone(text):
    assert redactor.redact(text).text == text


@pytest.mark.parametrize(
    "secret, kind",
    [
        ("PMAK-5f8a9b2c3d4e5f60718293a4-0a1b2c3d4e5f60718293a4b5c6d7e8f9a0", "API_KEY"),  # Postman
        ("NRJS-3f9a8b7c6d5e4f3a2b1", "API_KEY"),  # New Relic browser
        ("whsec_Qm8Lk2Xz9Rw4Tn1Vb6Hc3Jd7Fs5Gp0Ya", "STRIPE_KEY"),  # Stripe webhook
        ("LTAI5tQm8Lk2Xz9Rw4Tn1Vb6", "API_KEY"),  # Alibaba Cloud
        ("sha256~Qm8Lk2Xz9Rw4Tn1Vb6Hc3Jd7Fs5Gp0Ya2Ue8Rt4Wq3Z", "TOKEN"),  # OpenShift
    ],
)
def test_more_vendor_token_formats_are_removed(secret, kind):
    removed(f"here it is: {secret} thanks", secret, kind)


def test_the_private_members_of_a_json_web_key_are_removed_and_the_public_ones_kept():
    d = "X4cTteJY_gn4FYPsXB8rdXix5vwsg1FLN5E3EaG6RJoVH-HLLKD9M7dx5oo7GURknchnrRweUkC7hT5fJLM0"
    n = "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tS"
    result = redactor.redact(f'{{"kty": "RSA", "n": "{n}", "e": "AQAB", "d": "{d}"}}')
    assert d not in result.text and n in result.text and "PRIVATE_KEY" in result.kinds


def test_a_base64_blob_holding_a_secret_is_removed_and_one_holding_prose_is_kept():
    import base64

    env = base64.b64encode(b"DB_HOST=db01\nDB_PASSWORD=Xq8!vRz2@pLm\n").decode()
    removed(f"the secret's data is {env}", env, "SECRET")
    prose = base64.b64encode(b"nothing to see in this little note").decode()
    assert redactor.redact(f"data: {prose}").text == f"data: {prose}"


@pytest.mark.parametrize(
    "text, secret, kind",
    [
        ('SALT = b"q8v3m1x9t4k2z7p5w6r0"', "q8v3m1x9t4k2z7p5w6r0", "API_KEY"),  # Python bytes literal
        ('string pw = @"Kq7!mWz2pL";', "Kq7!mWz2pL", "PASSWORD"),  # C# verbatim string
        ('static const char password[] = "Kq7!mWz2pL";', "Kq7!mWz2pL", "PASSWORD"),  # C array
        ('{"key": "api_key", "value": "Zr4Tq9Lm2Xv8Pw3N", "enabled": true}', "Zr4Tq9Lm2Xv8Pw3N", "API_KEY"),
        (
            'env:\n  - name: DB_PASSWORD\n    value: "Wint3r#24"\n  - name: DB_HOST\n    value: db01',
            "Wint3r#24",
            "PASSWORD",
        ),
        ('<add key="SmtpPassword" value="Postbox77!" />', "Postbox77!", "PASSWORD"),
        ('<input type="password" name="pw" value="Hunter2x!">', "Hunter2x!", "PASSWORD"),
        ("sqlplus scott/T1ger#9@orcl", "T1ger#9", "PASSWORD"),
        ("SQL> connect system/Oracle_123", "Oracle_123", "PASSWORD"),
    ],
)
def test_secrets_in_string_literals_name_value_pairs_and_database_logins_are_removed(text, secret, kind):
    removed(text, secret, kind)


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "token_url", "value": "https://login.corp.example/token"}',
        '<add key="Theme" value="dark" />',
        "env:\n  - name: DB_HOST\n    value: db01.corp.example",
        '<input type="password" name="pw">',
        "I can't connect to the vpn/wifi at home",
    ],
)
def test_harmless_name_value_pairs_and_sentences_are_left_alone(text):
    assert redactor.redact(text).text == text


@pytest.mark.parametrize(
    "text, secret",
    [
        ("db.internal:5432:payroll:svc_payroll:Q8wZr2Lm9x", "Q8wZr2Lm9x"),  # ~/.pgpass
        ('psk="Sunrise-Harbor-2291"', "Sunrise-Harbor-2291"),  # wpa_supplicant
        (" enable secret Cobalt77Ridge", "Cobalt77Ridge"),  # Cisco IOS
        (" username admin password 7 0822455D0A16544541", "0822455D0A16544541"),  # type 7 is reversible
        ("snmp-server community Fjord9Pine RO", "Fjord9Pine"),
        ("radius-server key Gannet42Bluff", "Gannet42Bluff"),
        ("redis-cli -a Velvet83Storm ping", "Velvet83Storm"),
        ("AUTH Velvet83Storm", "Velvet83Storm"),
        ("requirepass Velvet83Storm", "Velvet83Storm"),
        ("jdbc:oracle:thin:scott/Tiger77Paw@//db01:1521/ORCL", "Tiger77Paw"),
        ("ldapsearch -x -D cn=admin,dc=corp -w Glacier58Bay -b dc=corp", "Glacier58Bay"),
        ("echo Bamboo47Gate | docker login --username jdoe --password-stdin", "Bamboo47Gate"),
        ("echo 'jdoe:Bamboo47Gate' | sudo chpasswd", "Bamboo47Gate"),
        ("requests.get(url, auth=('jdoe', 'Thistle27Bay'))", "Thistle27Bay"),
        ("smtp.login('alerts@corp.com', 'Raven63Moor')", "Raven63Moor"),
        ("define('DB_PASSWORD', 'Saffron56Peak');", "Saffron56Peak"),
        ("storePassword 'Quince71Cliff'", "Quince71Cliff"),
        ('signingConfigs { release { keyPassword "Quince71Cliff" } }', "Quince71Cliff"),
        ("HKLM\\...\\Winlogon  DefaultPassword  REG_SZ  Stork57Field", "Stork57Field"),
        ("login admin / Marigold66", "Marigold66"),
        ("credentials are jdoe / Coral49Reef", "Coral49Reef"),
        ("the admin pw for the switch is Nutmeg!52", "Nutmeg!52"),
        ("mot de passe: Cerise!83", "Cerise!83"),
        ("contraseña: Limon!47Sol", "Limon!47Sol"),
    ],
)
def test_passwords_in_network_gear_databases_code_arguments_and_other_languages_are_removed(text, secret):
    removed(text, secret, "PASSWORD")


@pytest.mark.parametrize(
    "secret, kind",
    [
        ("123456-234567-345678-456789-567890-678901-789012-890123", "SECRET"),  # BitLocker recovery key (digits only)
        ("xoxp-2210535565-2210535566-2231234567-7a9c2e4f1b3d5a7c9e1f3b5d7a9c2e4f", "SLACK_TOKEN"),  # ids with runs
        (
            "sl.BqZ9xk3Lm7QpR2vTw8YnB4cHd6Jf0GsE1uA5iO3kLm7QpR2vTw8YnB4cHd6Jf0GsE1uA5iO3kLm7QpR2vTw8YnB4cHd6Jf0Gs"
            "E1uA5iO3kLm7QpR2vTw8YnB4cHd6Jf0GsE1uA5iO",
            "TOKEN",
        ),  # Dropbox short-lived token
    ],
)
def test_recovery_keys_and_tokens_whose_ids_look_patterned_are_removed(secret, kind):
    removed(f"here it is: {secret}", secret, kind)


@pytest.mark.parametrize(
    "text",
    [
        "enable secret 5 $1$mERr$hx5rVt7rPNoS4wqbXKX7m0",  # a hash, not the password
        "AUTH required for this command",
        "AUTH LOGIN",
        "snmp-server community public RO",
        "login page / portal",
        "user guide / FAQ",
        "User/Group: staff/wheel",
        "Login: jdoe / Domain: CORP",
        "password reset for the VPN is done",
        "password length for admins is 16 characters",
        "the pw for the wifi is on the sticker",
        "the password of the day is a sticky note",
        't("password", "Mot de passe")',
        'header("api_key", "X-API-Key")',
        'grep password "notes.txt"',
        '["password", "confirm_password"]',
        'setToken("auth_token", token)',
        "echo $PASSWORD | docker login --password-stdin",
        "jdbc:oracle:thin:@//db01:1521/ORCL",
        "PasswordLastSet    REG_DWORD    0x1",
        "redis-cli -h cache01 ping",
        "password: !Ref DBPassword",
        "password: !!python/name:os.environ",
        '"apiKey": "YOUR_API_KEY"',
        "api_key: your-api-key-here",
        'token = "dummy-token-123"',
        'password = "example_password1"',
        'api_key = "0000000000000000"',
        'secret = "my-secret"',
        "secretName: my-secret",
    ],
)
def test_commands_settings_and_placeholders_that_only_mention_a_secret_are_left_alone(text):
    assert redactor.redact(text).text == text


def test_a_password_starting_with_an_exclamation_mark_is_not_taken_for_a_yaml_tag():
    removed("password: !Summer2024", "!Summer2024", "PASSWORD")


@pytest.mark.parametrize(
    "text, secret, kind",
    [
        ('db, err := sql.Open("mysql", "app:Gecko42Trail@tcp(db:3306)/shop")', "Gecko42Trail", "PASSWORD"),
        ("http --auth jdoe:Gecko42Trail GET https://api.corp", "Gecko42Trail", "PASSWORD"),
        ("mstsc /v:server01 /u:admin /p:Gecko42Trail", "Gecko42Trail", "PASSWORD"),
        ('<entry key="password">Gecko42Trail</entry>', "Gecko42Trail", "PASSWORD"),
        ("auth_pass Gecko42Trail", "Gecko42Trail", "PASSWORD"),
        ('secret "Gecko42Trail"', "Gecko42Trail", "SECRET"),
        ("INSERT INTO users (name, password) VALUES ('admin', 'Gecko42Trail');", "Gecko42Trail", "PASSWORD"),
        ("EXEC sp_addlogin 'report', 'Gecko42Trail'", "Gecko42Trail", "PASSWORD"),
        ("vault login s.Qx7Lm2Zt9Rv4Wp8Ks3Yn6Bc1", "s.Qx7Lm2Zt9Rv4Wp8Ks3Yn6Bc1", "TOKEN"),
        (
            "https://corp.webhook.office.com/webhookb2/3f8a9c2e-7b1d-4e6f-9a0c-5d2b8e1f4a7c@72f988bf-86f1-41af-91ab-"
            "2d7cd011db47/IncomingWebhook/8f2a9c4e7b1d3f6a0c5e9b2d7f1a4c8e/04b07795",
            "8f2a9c4e7b1d3f6a0c5e9b2d7f1a4c8e",
            "TOKEN",
        ),
        (
            "https://api.telegram.org/bot123456789:AAQx7Lm2Zt9Rv4Wp8Ks3Yn6Bc1Df5Gh0Jk2L/sendMessage",
            "AAQx7Lm2Zt9Rv4Wp8Ks3Yn6Bc1Df5Gh0Jk2L",
            "TOKEN",
        ),
        ("ldap_default_authtok = Gecko42Trail", "Gecko42Trail", "PASSWORD"),
    ],
)
def test_secrets_in_dsns_sql_config_directives_and_webhook_urls_are_removed(text, secret, kind):
    removed(text, secret, kind)


@pytest.mark.parametrize(
    "text",
    [
        "password = user.password",
        "secret = base64.b64decode(secret)",
        'token = "Bearer " + access_token',
        "password: CHANGE_ME",
        "password: `cat /run/secrets/db`",
        "secret_ref: projects/123/secrets/db-password/versions/latest",
        '"passwordLastSet": "2024-03-01T10:00:00Z",',
        "PasswordPolicy: MinimumLength=14",
        "password_encryption = scram-sha-256",
        "PasswordAuthentication no",
        "msbuild app.sln /p:Configuration=Release",
        "auth-user-pass creds.txt",
        "credential.helper store",
    ],
)
def test_code_settings_and_references_about_secrets_are_left_alone(text):
    assert redactor.redact(text).text == text


@pytest.mark.parametrize(
    "text, secret",
    [
        ("can you reset my password? current one is Spring2024!!", "Spring2024!!"),
        ("I changed my password to Winter#2025 and now outlook won't connect", "Winter#2025"),
        ("here are my creds: jdoe Hx8!kq22", "Hx8!kq22"),
        ("login with admin:Kx92!mmq", "Kx92!mmq"),
        ("wifi key: Coffee#House9", "Coffee#House9"),
        ("the key for the wifi is Coffee#House9", "Coffee#House9"),
        ("shared secret for the radius server: Coffee#House9", "Coffee#House9"),
        ("Wi-Fi: CorpNet / Kx92!mmq", "Kx92!mmq"),
        ("my pass is Hx8!kq22", "Hx8!kq22"),
        ("my old password was Autumn2023 and the new one is Autumn2024", "Autumn2024"),
        ("i think my password got leaked, it's Kx92!mmq", "Kx92!mmq"),
        ("password?? Kx92!mmq", "Kx92!mmq"),
        ("Password - Kx92!mmq", "Kx92!mmq"),
        ("the password (Kx92!mmq) is rejected", "Kx92!mmq"),
        ("my PIN for the copier is 0042", "0042"),
        ("recovery code: 8F3K-2L9M-QX7P-4ZT2", "8F3K-2L9M-QX7P-4ZT2"),
        ("backup codes: 84729163 19384756", "19384756"),
        ("door code 4471#", "4471#"),
        ("the verification code is 482913", "482913"),
    ],
)
def test_passwords_and_codes_said_the_way_people_chat_are_removed(text, secret):
    removed(text, secret, "PASSWORD")


def test_a_card_security_code_is_removed():
    removed("card ending 1111, cvv 123", "123", "SECRET")


@pytest.mark.parametrize(
    "text",
    [
        "my old password was fine",
        "password: ask IT",
        "password: see vault",
        "password: the usual",
        "the password for the guest network is posted at reception",
        "the verification code is wrong",
        "the recovery code didn't arrive",
        "password - forgot",
        "password -> reset link",
        "CVV field is empty",
        "login: failed",
        "my credentials stopped working after the update",
        "I changed my password to something longer",
    ],
)
def test_chat_about_passwords_and_codes_without_one_is_left_alone(text):
    assert redactor.redact(text).text == text


@pytest.mark.parametrize(
    "text, secret",
    [
        ('let dbPassword: String = "Vq7#kLm2Pz9!"', "Vq7#kLm2Pz9!"),
        ('val dbPass: String? = "Vq7#kLm2Pz9!"', "Vq7#kLm2Pz9!"),
        ('variable "db_password" {\n  default = "Vq7#kLm2Pz9!"\n}', "Vq7#kLm2Pz9!"),
        ("bind_password Vq7#kLm2Pz9!", "Vq7#kLm2Pz9!"),
        ('WiFi.begin("OfficeNet", "Vq7#kLm2Pz9!");', "Vq7#kLm2Pz9!"),
        ('smtp.login(user, "Vq7#kLm2Pz9!")', "Vq7#kLm2Pz9!"),
        ('conn.auth("Vq7kLm2Pz9xR")', "Vq7kLm2Pz9xR"),
        ('echo "Vq7#kLm2Pz9!" | sudo -S apt update', "Vq7#kLm2Pz9!"),
        ('{"log": "{\\"password\\": \\"Vq7kLm2Pz9xR\\"}"}', "Vq7kLm2Pz9xR"),
        ("logged form data: db_password%3DVq7kLm2Pz9xR%26db_user%3Dapp", "Vq7kLm2Pz9xR"),
        ('ssh-keygen -t ed25519 -N "Vq7kLm2Pz9xR" -f key', "Vq7kLm2Pz9xR"),
        ("7z a -pVq7kLm2Pz9xR backup.7z docs/", "Vq7kLm2Pz9xR"),
        ("zip -P Vq7kLm2Pz9xR a.zip report.txt", "Vq7kLm2Pz9xR"),
    ],
)
def test_passwords_in_typed_code_hcl_calls_escaped_json_and_archive_tools_are_removed(text, secret):
    removed(text, secret, "PASSWORD")


def test_a_vault_login_token_is_removed():
    removed("vault login Zk8qW2mXy7RtPv4nLs9bHc3dJf6gKa1e", "Zk8qW2mXy7RtPv4nLs9bHc3dJf6gKa1e", "TOKEN")


def test_a_secret_found_once_is_removed_everywhere_it_appears():
    result = redactor.redact("Password: Vq7kLm2Pz9xR\nConfirm: Vq7kLm2Pz9xR\nstill rejected")
    assert "Vq7kLm2Pz9xR" not in result.text, result.text
    assert result.text.endswith("still rejected")


@pytest.mark.parametrize(
    "text",
    [
        "token = accessToken",
        "secret: mySecret",
        'password = "my-secret-pw"',
        "password=@db.password@",
        "password: vault:secret/data/db#password",
        "password: op://it/database/password",
        "api_key: ssm:/prod/api_key",
        'public_key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq0Zk8qW2mXy7RtPv4nLs9bHc3dJf6gKa1e"',
        'public_key: "MCowBQYDK2VwAyEAZk8qW2mXy7RtPv4nLs9bHc3dJf6gKa1eQ9kL2mXy7Rt="',
        "The key fingerprint is SHA256:Zk8qW2mXy7RtPv4nLs9bHc3dJf6gKa1eQ9kL2mXy7Rt bob@laptop",
        "secret_version: 9e1f0b7d6c5a4e3f3f9a1c0e7b4d2a8c",
        'password_sha1 = "5baa61e4c9b93f3f0682250b6cf8331b7ee68fd8"',
        "md5(password) = 5f4dcc3b5aa765d61d8327deb882cf99",
        "STRIPE_PUBLISHABLE_KEY=pk_live_Zk8qW2mXy7RtPv4nLs9bHc3d",
        'recaptcha_site_key = "6LeIxAcTAAAAAJcZVRqyHh71UMIEGNQ_MXjiZKhI"',
    ],
)
def test_names_store_references_public_keys_and_digests_are_left_alone(text):
    assert redactor.redact(text).text == text


@pytest.mark.parametrize(
    "text, secret",
    [
        ("hi, outlook keeps asking for my password, I entered Lm4!quartz88 like 5 times", "Lm4!quartz88"),
        ("is Lm4!quartz88 a strong enough password?", "Lm4!quartz88"),
        ("trying to log in as jdoe with Lm4!quartz88 and it fails", "Lm4!quartz88"),
        ("I reset it to Lm4quartz88 yesterday and now teams won't sign in", "Lm4quartz88"),
        ("jdoe / Lm4!quartz88 doesn't work on the portal", "Lm4!quartz88"),
        ("My credentials - jdoe - Lm4!quartz88", "Lm4!quartz88"),
        ("They gave me Lm4!quartz88 as a temp password", "Lm4!quartz88"),
        ("u: jdoe p: Lm4!quartz88", "Lm4!quartz88"),
        ("vpn: user jdoe, pass Lm4!quartz88", "Lm4!quartz88"),
        ("bitlocker asks for PIN, mine is 482916", "482916"),
    ],
)
def test_a_password_shaped_token_in_a_message_about_logging_in_is_removed(text, secret):
    removed(text, secret, "PASSWORD")


@pytest.mark.parametrize(
    "text",
    [
        "my Office365 password expired, the iPhone15 still asks for it",
        "password prompt after KB5034441 failed with 0x80070643",
        "can't sign in: AADSTS50126 on login.microsoftonline.com",
        "login fails on LT-2024-0042, Windows 11 build 22631.2715",
        "new password: must differ from last 5",
        "password=$1",
        "reset my password at https://id.corp.example/reset?user=jdoe",
        "read/write access to \\\\fs01\\Finance2024 after the password change",
    ],
)
def test_messages_about_passwords_keep_versions_codes_and_links(text):
    assert redactor.redact(text).text == text


def test_a_question_mark_after_a_password_shaped_token_stays_in_the_sentence():
    result = redactor.redact("teams rejects my password, is it Lm4quartz88?")
    assert result.text == "teams rejects my password, is it [REDACTED:PASSWORD]?", result.text


def test_a_terraform_variable_default_is_named_after_the_variable():
    removed(
        'variable "api_token" {\n  default = "Zk8qW2mXy7RtPv4nLs9bHc3dJf6gKa1e"\n}',
        "Zk8qW2mXy7RtPv4nLs9bHc3dJf6gKa1e",
        "TOKEN",
    )


@pytest.mark.parametrize(
    "text",
    [
        "ks!CKsPin::ReleaseProcessSync+0x1e is on top of the stack",
        "the crash is in Auth::TokenCache::Refresh+0x2c",
        "see https://bench.example/UserRun/26665212 for the scores",
        "export it from your password manager, see the 1Password Setup page",
        "a passphrase as password is easier to remember and harder to guess",
    ],
)
def test_stack_traces_links_product_names_and_advice_in_it_docs_are_left_alone(text):
    assert redactor.redact(text).text == text


@pytest.mark.parametrize(
    "text, secret",
    [
        ("PIN: 482916", "482916"),
        ("Auth::Token = 'Zk8qW2mXy7RtPv4nLs9bHc3d'", "Zk8qW2mXy7RtPv4nLs9bHc3d"),
        ("login bob/Lm4!quartz88 on the portal", "Lm4!quartz88"),
        ("my password is 2024Summer", "2024Summer"),
    ],
)
def test_the_same_shapes_still_lose_real_secrets(text, secret):
    assert secret not in redactor.redact(text).text


@pytest.mark.parametrize(
    "text",
    [
        "def connect(host: str, password: str | None = None) -> None:",
        "    api_key: Optional[str] = None",
        "    input_ids: Tensor,",
        "    query_tokens: TokenizedTable | None = None,",
        "    secret_store: SecretStoreBackend = None",
        'auth = username + ":" + password',
        "self.api_key = api_key or os.getenv(self.api_key_env_var)",
        "user_password = user_password[:127]",
        "token = Name.Builtin",
        '"client-key-data": TEST_CLIENT_KEY_DATA_B64,',
        "max_input_tokens = 272000",
        '"token_ratio": 0.9957659295,',
        "class Qwen3ForTokenClassification(Qwen2ForTokenClassification):",
        "from kubernetes.client.models import V1SecretProjection",
        'prompt_cache_key="tenant:acme:support-v1",',
        "    password: Optional password for opening encrypted PDFs.",
        "backward pass: computes gradients of the loss",
        '    Token.String.Escape: "#C46C6C",',
        "credentials: https://docs.example.org/user_guide/cli/authentication.html",
        "see data-apis/array-api-extra#196 for the fix",
        "hf spaces secrets add username/my-space --secrets-file .env.secrets",
        "The token is sent as HTTP bearer authorization for remote files.",
        'url = make_url("postgresql://user:pass@host/dbname")',
        'if "password" in form and form["password"]:',
    ],
)
def test_code_types_expressions_names_and_docstrings_about_secrets_are_left_alone(text):
    assert redactor.redact(text).text == text


@pytest.mark.parametrize(
    "text, secret",
    [
        ("password: Summer2024, please reset it", "Summer2024"),
        ("password=hunter2 if that helps", "hunter2"),
        ("my pw: Lm4quartz88 and it's not working", "Lm4quartz88"),
        ("password: hunter2 - thanks", "hunter2"),
        ('password: str = "Zq8!vT3kLm"', "Zq8!vT3kLm"),
        ("api_key: 8f7a9b2c4d6e8f0a1b3c5d7e", "8f7a9b2c4d6e8f0a1b3c5d7e"),
        ("ftp://bob:Hx8!kq22@files.corp.example", "Hx8!kq22"),
        ("Authorization: Bearer Zk8qW2mXy7RtPv4nLs9bHc3d", "Zk8qW2mXy7RtPv4nLs9bHc3d"),
        ("secret_key = 'wOJIO9A2W5mFwDgiDvZbTSMK'", "wOJIO9A2W5mFwDgiDvZbTSMK"),
    ],
)
def test_values_next_to_code_shapes_are_still_removed(text, secret):
    assert secret not in redactor.redact(text).text


def test_a_name_made_of_words_is_wordlike_and_random_characters_are_not():
    from app.adapters.redaction.code_shapes import is_wordlike

    assert is_wordlike("Qwen2ForTokenClassification") and is_wordlike("max_tokens_per_1_minute")
    assert not is_wordlike("wOJIO9A2W5mFwDgiDvZbTSMK") and not is_wordlike("8f7a9b2c4d6e8f0a1b3c5d7e")


@pytest.mark.parametrize(
    "text, secret, kind",
    [
        ("authenticator seed WXQB7ZNM4KTR2JVH", "WXQB7ZNM4KTR2JVH", "SECRET"),
        ("the setup key is kq4m 7zxb n2vr t5hw", "kq4m 7zxb n2vr t5hw", "SECRET"),
        ('x_auth = "Zk8qW2mXy7RtPv4nLs9bHc3d"', "Zk8qW2mXy7RtPv4nLs9bHc3d", "API_KEY"),
        ("hmac: Qm9vT2xWc3R5ZkR8aGx3Yk1n", "Qm9vT2xWc3R5ZkR8aGx3Yk1n", "API_KEY"),
        ("DOCKER_TOKEN=dckr_oat_Zk8qW2mXy7RtPv4nLs9bHc3dJf6", "dckr_oat_Zk8qW2mXy7RtPv4nLs9bHc3dJf6", "API_KEY"),
        (
            "Cookie: _gitlab_session=8f3k2l9m4n7q1w5e6r8t0y2u3i4o5p6a",
            "8f3k2l9m4n7q1w5e6r8t0y2u3i4o5p6a",
            "GITLAB_TOKEN",
        ),
        (
            "SAUJZDEGXDNCF32EPF3DHODZDOCIS2JHTLGMXGEDN73U55XTPLPFT7V4SE",
            "SAUJZDEGXDNCF32EPF3DHODZDOCIS2JHTLGMXGEDN73U55XTPLPFT7V4SE",
            "PRIVATE_KEY",
        ),
        ("PMAT-01HZK8QW2MXY7RTPV4NLS9BHC3", "PMAT-01HZK8QW2MXY7RTPV4NLS9BHC3", "API_KEY"),
    ],
)
def test_otp_seeds_random_values_under_auth_names_and_more_vendor_formats_are_removed(text, secret, kind):
    removed(text, secret, kind)


@pytest.mark.parametrize(
    "text",
    [
        "KB5034441 failed with 0x80070643 on SERIALNUMBER2345",
        "ABCDEFGHIJKLMNOP",
        "x_auth = 'basic'",
        "api: https://api.corp.example/v2",
    ],
)
def test_serials_patterns_and_auth_settings_are_not_otp_seeds_or_keys(text):
    assert redactor.redact(text).text == text


def _b64(raw: bytes) -> str:
    import base64

    return base64.b64encode(raw).decode()


def test_an_encrypted_jwt_is_one_secret_whatever_its_payload_looks_like():
    import base64
    import json

    header = base64.urlsafe_b64encode(json.dumps({"alg": "RSA-OAEP", "enc": "A256GCM"}).encode()).decode().rstrip("=")
    jwe = f"{header}.Zk8qW2mXy7RtPv4nLs9bHc3dJf6gKa1e.Qm9vT2xWc3R5.Lm4quartz88Zk8qW2mXy7RtPv4n.Hx8kq22Zk8qW2mX"
    removed(f"the session cookie is {jwe}", jwe, "JWT")


@pytest.mark.parametrize(
    "text, secret, kind",
    [
        (f"debug log: Basic {_b64(b'jdoe:Hx8!kq22')}", _b64(b"jdoe:Hx8!kq22"), "AUTH_HEADER"),
        (
            "AKIAZ7Q4M2XK9R3T5WNB,wJalrXUtnFEMIK7MDENGbPxRfiCYZk8qW2mXy7Rt",
            "wJalrXUtnFEMIK7MDENGbPxRfiCYZk8qW2mXy7Rt",
            "AWS_KEY",
        ),
        ("redis://:S3cretPw9@cache:6379/0", "S3cretPw9", "URL_CREDENTIALS"),
        ("curl --proxy-user jdoe:Hx8kq22x http://proxy", "Hx8kq22x", "PASSWORD"),
        ("curl --oauth2-bearer Zk8qW2mXy7RtPv4nLs9bHc3d https://api.example", "Zk8qW2mXy7RtPv4nLs9bHc3d", "TOKEN"),
        ("akab-k3m9q2x7w4r8t5z1-n6v2b8c4x9m3l7p5", "akab-k3m9q2x7w4r8t5z1-n6v2b8c4x9m3l7p5", "API_KEY"),
    ],
)
def test_basic_blobs_aws_pairs_url_and_command_credentials_are_removed(text, secret, kind):
    removed(text, secret, kind)


@pytest.mark.parametrize(
    "text",
    [
        "Basic authentication is enabled on the proxy",
        f"Basic {_b64(b'just some words without a colon')}",
        "version eyJhbGciOiJIUzI1NiJ9.broken",
    ],
)
def test_basic_auth_prose_and_broken_tokens_are_left_alone(text):
    assert redactor.redact(text).text == text


@pytest.mark.parametrize(
    "text",
    [
        'return f"postgresql://{user}:{password}@{host}:{port}/{database}"',
        "username = password = port = None",
        "# Pre-pass: find inputs of waiting nodes",
        '("qwen2_5_omni_token2wav", "qwen2_5_omni"),',
    ],
)
def test_format_fields_chained_assignments_comments_and_snake_names_are_left_alone(text):
    assert redactor.redact(text).text == text


def test_a_password_in_braces_is_still_a_password():
    assert "Hx8kq22" not in redactor.redact("password = {Hx8kq22}").text


@pytest.mark.parametrize(
    "text, secret, kind",
    [
        ("bindpw Hx8kq22vb", "Hx8kq22vb", "PASSWORD"),
        ("rootpw Hx8kq22vb", "Hx8kq22vb", "PASSWORD"),
        ("username admin privilege 15 secret 0 Hx8kq22vb", "Hx8kq22vb", "PASSWORD"),
        (f"_auth={_b64(b'jdoe:Hx8kq22vb')}", _b64(b"jdoe:Hx8kq22vb"), "AUTH_HEADER"),
        (
            f'{{"auths": {{"registry.corp.example": {{"auth": "{_b64(b"jdoe:Hx8kq22vb")}"}}}}}}',
            _b64(b"jdoe:Hx8kq22vb"),
            "AUTH_HEADER",
        ),
        ("<config>\n  <password>\n    Hx8kq22vb\n  </password>\n</config>", "Hx8kq22vb", "PASSWORD"),
    ],
)
def test_ldap_and_switch_passwords_registry_auth_blobs_and_xml_values_on_their_own_line_are_removed(text, secret, kind):
    removed(text, secret, kind)


def test_detect_secrets_still_finds_a_private_key_marker_in_a_very_long_line():
    # an escaped, encrypted traditional PEM inside a 5,000-character JSON line: its markers have no dashes,
    # and detect-secrets' other plugins skip lines this long
    body = "q7Bz9Xy2Wm4Rt8Lp3Nv6Hk1Jd5Fg0Sa7Qe2Zc9Vb4Mn8Xw3Ty6Ui1Op5As0Df7Gh2Jk4Lz9"
    line = (
        '{"padding": "' + "x1 " * 1600 + '", "pem": "\\u002d\\u002dBEGIN RSA PRIVATE KEY\\u002d\\u002d\\n'
        "Proc-Type: 4,ENCRYPTED\\nDEK-Info: AES-128-CBC,8F3B2C4D5E6F7A8B9C0D1E2F3A4B5C6D\\n\\n" + body + '\\n"}'
    )
    assert len(line) > 4000
    engine = RedactionEngine([DetectSecretsPlugins().find])
    assert body not in PolicyRedactor(engine).redact(line).text


def test_a_masked_value_after_a_password_flag_is_left_alone_and_a_real_one_is_not():
    assert redactor.redact("-dbpwd VAL:xxxx").text == "-dbpwd VAL:xxxx"
    assert "Hx8kq22vb" not in redactor.redact("-dbpwd Hx8kq22vb").text


@pytest.mark.parametrize(
    "text",
    [
        '"token2wav_config": Qwen2_5OmniToken2WavConfig,',
        "Offset for the token ids embedded by `Gemma3nMultimodalEmbedder` and the vocab",
        "    :param password: user password",
        "anthropic_api_key: Anthropic API key to use. Only needed once",
        'connection_string = "DRIVER={SQL Server};SERVER=db;DATABASE=test;UID=user;PWD=password"',
        "It does not matter which password was matched. Both passwords work",
        "buff.writeUInt8(Buffer.byteLength(password));",
        "Pass :meth:`peek` a default value to return instead",
        "* 'bandpass' : flat response in bands.",
        'connect_header += f"Proxy-Authorization: Basic {encoded_str}\\r\\n"',
        "Auth: type[httpx2.Auth]",
    ],
)
def test_class_names_docstring_fields_placeholders_and_rst_roles_are_left_alone(text):
    assert redactor.redact(text).text == text


@pytest.mark.parametrize(
    "text, secret",
    [
        ("password = SuperSecretPassword1", "SuperSecretPassword1"),
        ("the password was Summer2024", "Summer2024"),
        ("PWD=Hx8kq22vb;UID=jdoe;SERVER=db01", "Hx8kq22vb"),
    ],
)
def test_camel_case_and_connection_string_passwords_are_still_removed(text, secret):
    assert secret not in redactor.redact(text).text


def test_a_plain_word_password_followed_by_chat_is_still_removed():
    assert "Sunshine" not in redactor.redact("db_password: Sunshine but it fails").text


def test_a_token_right_after_a_terminal_colour_code_is_removed_and_one_inside_a_longer_run_is_not():
    token = "ghp_Zk8qW2mXy7RtPv4nLs9bHc3dJf6gKa1eQ9kL"
    removed(f"\x1b[32m{token}\x1b[0m", token, "GITHUB_TOKEN")
    assert redactor.redact(f"build/abc{token}").text == f"build/abc{token}"


def test_detect_secrets_checks_a_bounded_window_around_a_value_in_a_long_run():
    from app.adapters.redaction.detect_secrets_plugins import _enclosing_token

    run = "AKIA" * 5000
    window = _enclosing_token(run, run[10_000:10_020])
    assert len(window) <= 420 and run[10_000:10_020] in window
    assert _enclosing_token("key AKIAZ7Q4M2XK9R3T5WNB here", "AKIAZ7Q4M2XK9R3T5WNB") == "AKIAZ7Q4M2XK9R3T5WNB"


@pytest.mark.parametrize(
    "text, secret",
    [
        (
            'Connection c = DriverManager.getConnection("jdbc:mysql://db01/crm", "crm_app", "Lantern#882");',
            "Lantern#882",
        ),
        ('$link = mysqli_connect("db01", "wiki", "Orchid-5150", "wikidb");', "Orchid-5150"),
        ("$pdo = new PDO($dsn, 'wiki', 'Orchid-5150');", "Orchid-5150"),
        ('db = pymysql.connect("db01", "reports", "Kettle77!", "sales")', "Kettle77!"),
        ('ftp = ftplib.FTP("ftp.corp.example", "scanner", "Paper$Jam9")', "Paper$Jam9"),
        ('client.connect("10.0.4.12", 22, "backup", "Tidal_Wave3")', "Tidal_Wave3"),
        ('PasswordAuthentication("relay", "Fjord+Mist61".toCharArray())', "Fjord+Mist61"),
        ('$c = oci_connect("hr", "Birch_Canoe4", "//db01/XE");', "Birch_Canoe4"),
    ],
)
def test_a_password_passed_by_position_to_a_known_call_is_removed(text, secret):
    removed(text, secret, "PASSWORD")


@pytest.mark.parametrize(
    "text",
    [
        'db.connect("reports", "sales", "summary", "weekly")',  # an unknown call: positions mean nothing
        "conn = DriverManager.getConnection(url, user, password);",  # variables, not values
        "ssh.connect(host, 22, user, password)",
    ],
)
def test_calls_whose_arguments_are_variables_or_unknown_are_left_alone(text):
    assert redactor.redact(text).text == text


@pytest.mark.parametrize(
    "text, first_byte",
    [
        ("#define AES_KEY {0x4a, 0x91, 0x0c, 0x7e, 0xd3, 0x22, 0x5b, 0xf0, 0x18, 0x6d}", "0x4a"),
        (
            "static const uint8_t hmac_secret[12] = {0x9c, 0x01, 0x44, 0xe7, 0x3a, 0xb2, 0x5d, 0x10, 0xfe, 0x61, 0x08, 0x7b};",
            "0x9c",
        ),
        ("byte[] key = new byte[] { 0x11, 0xa0, 0x5f, 0xc3, 0x27, 0x9e, 0x64, 0xd8 };", "0x11"),
        ("#define PSK {023, 010, 041, 033, 043, 000, 0x7f, 0x3c, \\", "023"),
    ],
)
def test_a_key_written_as_a_byte_array_is_removed(text, first_byte):
    result = redactor.redact(text)
    assert first_byte not in result.text and "SECRET" in result.kinds, result.text


@pytest.mark.parametrize(
    "text",
    [
        "static const uint8_t keymap[16] = {0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b};",
        "int key_codes[] = {65, 66, 67, 68, 69, 70, 71, 72};",
        "uint8_t key[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};",
        "key_sizes = [128, 192, 256]",
        "uint8_t buffer[8] = {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0};",
    ],
)
def test_keyboard_tables_zeroed_keys_and_other_arrays_are_left_alone(text):
    assert redactor.redact(text).text == text


def test_a_c_macro_quoted_inside_a_string_keeps_its_password_rule():
    text = r'"#define\tDB_PASSWORD\t\"Cobalt-Ridge7\""'
    assert "Cobalt-Ridge7" not in redactor.redact(text).text


@pytest.mark.parametrize(
    "secret, kind",
    [
        ("rk_prod_T4mq8Zw1Xc6Vb9Nn2Lk5Hj7Gf", "STRIPE_KEY"),
        ("FLWSECK_TEST-a3f9c0e2b7d1", "API_KEY"),
        ("api_org_QmTzWkXbRvNcLpYsHdJfGaUeKiOnMbVc", "API_KEY"),
        ("sgp_9f3a6c0e1b7d2a48_" + "4e8c1a7f0b3d9e62" * 2 + "5a0c9e1f", "TOKEN"),
        ("s-s4t2ud-" + "7c1e9a04f3b8d26e" * 4, "API_KEY"),
        ("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", "API_KEY"),
        ("4b1dQm7Zx2Kc9Vw4Tn8Lp1Rb6Hs3Jd0Fg5Ya2Ue7Wo", "API_KEY"),
        (
            "v1.0-eee65f53e9421ce50211670e-ae679f02e8d28a79023c39c200661fccd268a29a0d347301ef56e64dc3cd6089065c3146e80a9c2"
            "22670bbe4f4c54977656cf2d133187c8df95247f2866028de71159b42b4ea410fb9",
            "PRIVATE_KEY",
        ),
    ],
)
def test_sourcegraph_maxmind_clickhouse_cloudflare_and_other_prefixed_tokens_are_removed(secret, kind):
    removed(f"the setup notes say {secret} works for the build", secret, kind)


def test_a_token_made_of_underscored_random_parts_after_a_key_name_is_removed_and_a_snake_name_is_not():
    token = "crm_" + "8e1f4a9c0b7d3e52" + "_" + "d04c7a19e8f35b26" * 2
    assert token not in redactor.redact(f"API_TOKEN={token}").text
    assert redactor.redact("cache_key = user_profile_settings_v2").text == "cache_key = user_profile_settings_v2"


def test_bundler_credentials_for_a_gem_server_are_removed_and_build_options_kept():
    removed("BUNDLE_GEMS__CORP__EXAMPLE=deploy:Walnut-Shelf42", "Walnut-Shelf42", "PASSWORD")
    text = 'BUNDLE_BUILD__NOKOGIRI__LIB: "--use-system-libraries"'
    assert redactor.redact(text).text == text


@pytest.mark.parametrize(
    "text, secret",
    [
        ('sqlcmd -S db01 -U sa -P Harbor!Gate52 -Q "select 1"', "Harbor!Gate52"),
        ("bcp dbo.orders out orders.dat -S db01 -U loader -P Sprocket_88 -c", "Sprocket_88"),
        ("schtasks /create /tn nightly /tr backup.cmd /sc daily /RU svc_backup /RP Moss-Lake-19", "Moss-Lake-19"),
    ],
)
def test_sql_server_clients_and_scheduled_task_passwords_are_removed(text, secret):
    removed(text, secret, "PASSWORD")


@pytest.mark.parametrize(
    "text",
    [
        'sqlcmd -S db01 -E -Q "select 1"',
        "schtasks /create /tn nightly /tr backup.cmd /sc daily /RU SYSTEM /RP *",
        "psql -h db01 -U app -W inventory",  # -W only makes psql ask; `inventory` is the database
    ],
)
def test_sql_clients_with_integrated_login_or_a_prompt_are_left_alone(text):
    assert redactor.redact(text).text == text


@pytest.mark.parametrize(
    "text",
    [
        "the wifi password is printed on the sticker under the router",
        "The password is rotated every 90 days by the PAM tool.",
        "the password is remembered by Chrome",
        "the password is probably cached in credential manager",
        "the password is synchronised from the directory every 30 minutes",
    ],
)
def test_a_sentence_saying_what_happens_to_a_password_keeps_its_verb(text):
    assert redactor.redact(text).text == text


@pytest.mark.parametrize(
    "text, secret",
    [
        ("the password is butterfly", "butterfly"),
        ("my password is sunflower", "sunflower"),
        ("the password is Rotated", "Rotated"),
    ],
)
def test_a_word_password_that_is_not_a_verb_form_is_still_removed(text, secret):
    removed(text, secret, "PASSWORD")


@pytest.mark.parametrize(
    "text, secret, kind",
    [
        ("password: |\n  Harbor!Gate52\nuser: app", "Harbor!Gate52", "PASSWORD"),
        (
            "  client_secret: >-\n    Qm7Zx2Kc9Vw4Tn8Lp1Rb6Hs3Jd0Fg5Ya\n  scope: read",
            "Qm7Zx2Kc9Vw4Tn8Lp1Rb6Hs3Jd0Fg5Ya",
            "SECRET",
        ),
    ],
)
def test_a_yaml_block_value_under_a_secret_name_is_removed(text, secret, kind):
    result = redactor.redact(text)
    assert secret not in result.text and kind in result.kinds, result.text
    assert "user: app" in result.text or "scope: read" in result.text


def test_a_yaml_block_describing_a_password_is_left_alone():
    text = "password: |\n  Use the one from the welcome letter.\n  Change it at first login.\n"
    assert redactor.redact(text).text == text


def test_a_snake_case_name_after_a_key_name_is_left_alone_and_underscored_random_characters_are_not():
    assert redactor.redact("cache_key = qwen2_5_omni_thinker").text == "cache_key = qwen2_5_omni_thinker"
    assert "a8f3_k2m9_x7q1_p4z6_w0e5" not in redactor.redact('nonce = "a8f3_k2m9_x7q1_p4z6_w0e5"').text


@pytest.mark.parametrize(
    "text, secret",
    [
        ("sorry wrong window, Qv7$mTz29k", "Qv7$mTz29k"),
        ("I set it to Hawk4!Lr8nq for now", "Hawk4!Lr8nq"),
        ("tried Gz5@wPe41x and then Mr9&bTq27c, both rejected", "Mr9&bTq27c"),
        ("Excel sheet protected with Pk3#vLw82s", "Pk3#vLw82s"),
    ],
)
def test_a_password_pasted_with_no_word_about_passwords_is_still_removed(text, secret):
    removed(text, secret, "PASSWORD")


@pytest.mark.parametrize(
    "text",
    [
        "nt!KiPageFault+0x474 shows up in every dump",
        "the bundle defines Response$1 and keyword$DataError",
        "the trace says com.example.Main$1.run failed",
        "npm install node@18 then pkg@latest",
        "formula is (2*A*G*l**2 + 12*E*I)",
        "the link had q%2C20required in it",
        'author = "M$Bn0Tf0YHD"',
        "Rajaaa100@Hotmail is not a full address",
    ],
)
def test_symbols_in_code_formulas_handles_and_debugger_symbols_are_not_passwords(text):
    assert redactor.redact(text).text == text


@pytest.mark.parametrize(
    "text, secret",
    [
        ("passowrd is Fern-Hollow51", "Fern-Hollow51"),
        ("pasw: Fern-Hollow51", "Fern-Hollow51"),
        ("the wifi key for the 3rd floor is Tz8kq29LLm", "Tz8kq29LLm"),
        ("network security key: Lantern2Moss9", "Lantern2Moss9"),
        ("le mdp c'est Gohf332Sgk", "Gohf332Sgk"),
        ("la clave del wifi es yyjVw5HanSBe", "yyjVw5HanSBe"),
    ],
)
def test_typos_wifi_key_phrasings_and_french_and_spanish_words_for_password_are_understood(text, secret):
    removed(text, secret, "PASSWORD")


@pytest.mark.parametrize(
    "text",
    [
        "Intune says my device passcode is non-compliant",
        "my PIN is 6-digits, right?",
        "my password is case-sensitive apparently",
        "Teams login error caa70004",
        "login failed 0x80070005 on the shared PC",
    ],
)
def test_words_describing_a_password_and_error_codes_after_login_are_left_alone(text):
    assert redactor.redact(text).text == text


@pytest.mark.parametrize(
    "text, secret",
    [
        ("phone PIN 661042, SIM PUK 84417203", "84417203"),
        ("RSA token shows 901244, PIN 5521", "901244"),
        ("token code: 77310482", "77310482"),
    ],
)
def test_a_puk_and_a_hardware_token_code_are_removed(text, secret):
    removed(text, secret, "PASSWORD")


def test_the_age_of_a_token_is_not_its_code():
    assert redactor.redact("the RSA token is 3 years old").text == "the RSA token is 3 years old"


@pytest.mark.parametrize(
    "text",
    [
        "Does this work with the Samsung Model#UN55MU8000 tv?",
        "Part#BN59-01199F is the remote",
        "the SKU#Xr5521b is the same",
        "I have a 2015 55in?Does it fit",
        "Will it work with Roku3?Yes it will",
        "bought 3 of them@Walmart2day",
        "price was $299@BestBuy2 last week",
        "I get error 0x80070005&Code2 when updating",
        "Connect HDMI2 to the TV&Cable3 box",
    ],
)
def test_product_references_and_run_together_sentences_are_not_passwords(text):
    result = redactor.redact(text)
    assert "PASSWORD" not in result.kinds, result.text


def test_a_byte_array_with_decimal_numbers_written_with_a_leading_zero_is_read_not_a_crash():
    text = "static const uint8_t aes_key[16] = {01, 08, 09, 0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae};"
    assert "0x2b" not in redactor.redact(text).text


def test_both_passwords_go_when_one_line_names_the_old_and_the_new_and_a_second_pass_changes_nothing():
    text = "changed it from Kq7@tj81xD to Ib4#yf26Mr but Outlook still wants the old one"
    once = redactor.redact(text).text
    assert "Kq7@tj81xD" not in once and "Ib4#yf26Mr" not in once
    assert redactor.redact(once).text == once


def test_a_vendor_token_that_runs_on_past_its_format_is_removed_whole():
    token = "xoxp-1-Z38YWenMbWTsuLcze3LiPp5PiGu_cjgWjzbRUGRToh"
    result = redactor.redact(f"slack said {token} is revoked").text
    assert "cjgWjzbRUGRToh" not in result and "Z38YWen" not in result


def test_a_host_after_redacted_url_credentials_is_kept_on_a_second_pass():
    once = redactor.redact("mongodb+srv://app:Hx8!kq22vb@cluster0.abcd.mongodb.net/").text
    assert "cluster0.abcd.mongodb.net" in once and redactor.redact(once).text == once


# --- a service's key under the service's own name -------------------------------------------------
@pytest.mark.parametrize(
    "text, secret",
    [
        ("twitter: 8fK2mQ9xLp4Rt7Vb1Nc6Hd3Js", "8fK2mQ9xLp4Rt7Vb1Nc6Hd3Js"),
        ("algolia_admin: 4b7c9e2f1a8d6b3e5c0f7a9d2e4b6c8a", "4b7c9e2f1a8d6b3e5c0f7a9d2e4b6c8a"),
        ('SENDGRID = "kq9X2mVb7Lp4Rt1Nc8Hd3Js6Fg"', "kq9X2mVb7Lp4Rt1Nc8Hd3Js6Fg"),
        ('{"zendesk_admin": "Lp4Rt1Nc8Hd3Js6Fgkq9X2mVb7"}', "Lp4Rt1Nc8Hd3Js6Fgkq9X2mVb7"),
    ],
)
def test_a_random_value_under_a_services_name_is_a_key(text, secret):
    removed(text, secret, "API_KEY")


@pytest.mark.parametrize(
    "text",
    [
        "twitter_handle: deskmate_support_team",
        "algolia_app_id: B1G2GM9NG0",
        'model = init_embeddings("openai:text-embedding-3-small")',
        'llm = init_chat_model(model="anthropic:claude-haiku-4-5-20251001")',
        "slack_channel: C04Q2L8K7N9AB3XY7",
        "stripe: 12.4.0",
        "commit: 4b7c9e2f1a8d6b3e5c0f7a9d2e4b6c8a1f3e5d7c",
    ],
)
def test_names_models_versions_and_ids_next_to_a_service_stay(text):
    assert redactor.redact(text).text == text


@pytest.mark.parametrize(
    "text, secret, kind",
    [
        ("vpn login fails with bob:Zq7!Lp4#Wg7y", "Zq7!Lp4#Wg7y", "PASSWORD"),
        ("try svc-backup:Rq8$mV2!xT on the NAS", "Rq8$mV2!xT", "PASSWORD"),
        ("my vpn secret is Summer2024Gg7! but it fails", "Summer2024Gg7", "SECRET"),
        (
            "uploaded wifi-guest-ghp_Kp9Lm2Qr5St8Uv1Wx4Yz7Ab0Cd3Ef6Gh9Ij.md",
            "Kp9Lm2Qr5St8Uv1Wx4Yz7Ab0Cd3Ef6Gh9Ij",
            "GITHUB_TOKEN",
        ),
        ("export my_ghp_Kp9Lm2Qr5St8Uv1Wx4Yz7Ab0Cd3Ef6Gh9Ij", "Kp9Lm2Qr5St8Uv1Wx4Yz7Ab0Cd3Ef6Gh9Ij", "GITHUB_TOKEN"),
    ],
)
def test_a_name_colon_password_pair_and_a_token_glued_to_a_name_are_removed(text, secret, kind):
    removed(text, secret, kind)


@pytest.mark.parametrize(
    "text",
    [
        "error at 10:30:45 in module os:path",
        "pull node:18-alpine and python:3.11-slim",
        "digest sha256:9f86d081884c7d659a2feaa0c55ad015",
        "std::vector<int> and a?b:c",
        "the ratio is 16:9 on the TV",
        "see https://wiki.example.test:8443/Page#Top1x",
    ],
)
def test_colons_that_are_not_a_login_pair_are_kept(text):
    assert redactor.redact(text).text == text
