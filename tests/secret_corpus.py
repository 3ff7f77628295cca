"""A corpus of made-up credentials in the formats secret-scanning rule sets document
(gitleaks' rules, detect-secrets' plugins, the Kingfisher catalog), and of ordinary
field-report text that must not be taken for one.

No value here is a live credential and none is written out whole: every one is built
at import time from a prefix and characters drawn with a fixed seed, so the repository
holds no key-shaped literal while runs stay reproducible.
"""

from __future__ import annotations

import base64
import json
import random
import string

_RNG = random.Random(8088)
UP = string.ascii_uppercase
LOW = string.ascii_lowercase
DIG = string.digits
HEX = "0123456789abcdef"
ALNUM = string.ascii_letters + DIG
URLSAFE = ALNUM + "_-"
B64 = ALNUM + "+/"


def r(alphabet: str, n: int) -> str:
    """n characters of `alphabet`, with at least one digit and one letter when the
    alphabet has both (real tokens do; a run of one class reads as a word)."""
    while True:
        s = "".join(_RNG.choice(alphabet) for _ in range(n))
        if n < 8 or not (set(alphabet) & set(DIG)) or not (set(alphabet) & set(string.ascii_letters)):
            return s
        if any(c.isdigit() for c in s) and any(c.isalpha() for c in s):
            return s


def j(*parts: str) -> str:
    return "".join(parts)


def _pw() -> str:
    return r(ALNUM, 6) + _RNG.choice("!#%^*") + r(ALNUM, 5)


def _key_body(n: int = 4) -> str:
    return "\n".join(["MII" + r(B64, 61)] + [r(B64, 64) for _ in range(n - 1)])


def _jwt() -> str:
    head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').rstrip(b"=").decode()
    body = base64.urlsafe_b64encode(json.dumps({"sub": r(DIG, 8), "iat": 1700000000}).encode()).rstrip(b"=").decode()
    return j(head, ".", body, ".", r(URLSAFE, 43))


def _block(label: str) -> str:
    return j("-----BEGIN ", label, "-----\n", _key_body(), "\n-----END ", label, "-----")


# (name, text as it appears inside a letter field)
SECRETS: list[tuple[str, str]] = [
    ("aws access key id", j("AK", "IA", r(UP + DIG, 16))),
    ("aws temporary key id", j("AS", "IA", r(UP + DIG, 16))),
    ("aws secret key, snake assignment", j("aws_secret_access_key = ", r(B64, 40))),
    ("aws secret key, env", j("AWS_SECRET_ACCESS_KEY=", r(B64, 40))),
    ("aws session token, export", j("export AWS_SESSION_TOKEN=", r(B64, 60))),
    ("github classic token", j("gh", "p_", r(ALNUM, 36))),
    ("github oauth token", j("gh", "o_", r(ALNUM, 36))),
    ("github app token", j("gh", "s_", r(ALNUM, 36))),
    ("github user-to-server token", j("gh", "u_", r(ALNUM, 36))),
    ("github refresh token", j("gh", "r_", r(ALNUM, 36))),
    ("github fine-grained token", j("github", "_pat_", r(ALNUM, 22), "_", r(ALNUM, 59))),
    ("gitlab personal token", j("gl", "pat-", r(URLSAFE, 20))),
    ("gitlab runner token", j("gl", "rt-", r(URLSAFE, 20))),
    ("gitlab deploy token", j("gl", "dt-", r(URLSAFE, 20))),
    ("gitlab trigger token", j("gl", "ptt-", r(HEX, 40))),
    ("slack bot token", j("xo", "xb-", r(DIG, 12), "-", r(DIG, 13), "-", r(ALNUM, 24))),
    ("slack user token", j("xo", "xp-", r(DIG, 12), "-", r(DIG, 12), "-", r(DIG, 13), "-", r(HEX, 32))),
    ("slack app token", j("xa", "pp-1-", r(UP + DIG, 11), "-", r(DIG, 13), "-", r(HEX, 64))),
    ("slack webhook", j("https://hooks.slack.com/services/T", r(UP + DIG, 8), "/B", r(UP + DIG, 8), "/",
                        r(ALNUM, 24))),
    ("discord webhook", j("https://discord.com/api/webhooks/", r(DIG, 18), "/", r(URLSAFE, 68))),
    ("openai key", j("s", "k-", r(ALNUM, 48))),
    ("openai project key", j("s", "k-proj-", r(URLSAFE, 64))),
    ("anthropic key", j("s", "k-ant-api03-", r(URLSAFE, 93), "AA")),
    ("stripe live key", j("s", "k_live_", r(ALNUM, 24))),
    ("stripe test key", j("s", "k_test_", r(ALNUM, 24))),
    ("stripe restricted key", j("r", "k_live_", r(ALNUM, 24))),
    ("stripe webhook secret", j("wh", "sec_", r(ALNUM, 32))),
    ("google api key", j("AI", "za", r(URLSAFE, 35))),
    ("google oauth client secret", j("GOC", "SPX-", r(URLSAFE, 28))),
    ("gcp service account json", j('{"type": "service_account", "private_key": "', _block("PRIVATE KEY"), '"}')),
    ("rsa private key block", _block("RSA PRIVATE KEY")),
    ("openssh private key block", _block("OPENSSH PRIVATE KEY")),
    ("ec private key block", _block("EC PRIVATE KEY")),
    ("pgp private key block", _block("PGP PRIVATE KEY BLOCK")),
    ("encrypted private key block", _block("ENCRYPTED PRIVATE KEY")),
    ("key body without its BEGIN line", _key_body(5)),
    ("npm token", j("np", "m_", r(ALNUM, 36))),
    ("hugging face token", j("h", "f_", r(ALNUM, 34))),
    ("pypi token", j("py", "pi-AgEIcHlwaS5vcmc", r(URLSAFE, 70))),
    ("sendgrid key", j("S", "G.", r(URLSAFE, 22), ".", r(URLSAFE, 43))),
    ("twilio api key", j("S", "K", r(HEX, 32))),
    ("twilio auth token assignment", j("TWILIO_AUTH_TOKEN=", r(HEX, 32))),
    ("mailgun key", j("ke", "y-", r(HEX, 32))),
    ("mailchimp key", j(r(HEX, 32), "-us", r(DIG, 2))),
    ("shopify access token", j("shp", "at_", r(HEX, 32))),
    ("shopify shared secret", j("shp", "ss_", r(HEX, 32))),
    ("telegram bot token", j(r(DIG, 10), ":AA", r(URLSAFE, 33))),
    ("age secret key", j("AGE-SECRET", "-KEY-1", r(UP.replace("B", "").replace("I", "").replace("O", "") + "23456789", 58))),
    ("vault service token", j("hv", "s.", r(URLSAFE, 90))),
    ("vault batch token", j("hv", "b.", r(URLSAFE, 90))),
    ("digitalocean personal token", j("do", "p_v1_", r(HEX, 64))),
    ("digitalocean oauth token", j("do", "o_v1_", r(HEX, 64))),
    ("databricks token", j("da", "pi", r(HEX, 32))),
    ("azure storage connection string", j("DefaultEndpointsProtocol=https;AccountName=", r(LOW + DIG, 12),
                                          ";AccountKey=", r(B64, 86), "==;EndpointSuffix=core.windows.net")),
    ("azure sas url", j("https://", r(LOW, 10), ".blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=o&sp=r",
                        "&se=2026-01-01T00:00:00Z&sig=", r(B64, 43), "%3D")),
    ("jwt", _jwt()),
    ("authorization bearer header", j("Authorization: Bearer ", r(URLSAFE, 40))),
    ("authorization basic header", j("Authorization: Basic ", base64.b64encode(j("agent-a:", _pw()).encode()).decode())),
    ("postgres url with password", j("postgres://app:", _pw(), "@db.internal:5432/prod")),
    ("mysql url with password", j("mysql://root:", _pw(), "@10.0.0.5/app")),
    ("mongodb srv url with password", j("mongodb+srv://svc:", _pw(), "@cluster0.example.net/db")),
    ("redis url with password", j("redis://:", _pw(), "@cache.internal:6379/0")),
    ("amqp url with password", j("amqp://guest-user:", _pw(), "@broker.internal:5672/vh")),
    ("basic auth url", j("https://deploy:", _pw(), "@registry.example.com/v2/")),
    ("netrc entry", j("machine api.example.com login agent-a password ", _pw())),
    ("mysql -p command", j("mysql -u root -p", _pw(), " app_db")),
    ("docker login -p", j("docker login -u ci -p ", _pw(), " registry.example.com")),
    ("json password", j('{"user": "app", "password": "', _pw(), '"}')),
    ("yaml password", j("database:\n  user: app\n  password: ", _pw())),
    ("json token", j('{"token": "', r(ALNUM, 32), '"}')),
    ("json client_secret", j('{"client_id": "abc", "client_secret": "', r(URLSAFE, 32), '"}')),
    ("camelCase accessToken", j("accessToken: ", r(URLSAFE, 32))),
    ("camelCase clientSecret", j('clientSecret = "', r(URLSAFE, 32), '"')),
    ("camelCase apiKey", j('apiKey: "', r(ALNUM, 32), '"')),
    ("SECRET_KEY env", j("SECRET_KEY=", r(URLSAFE, 50))),
    ("API_KEY env", j("API_KEY=", r(ALNUM, 32))),
    ("PGPASSWORD env", j("PGPASSWORD=", _pw(), " psql -h db -U app")),
    ("password starting with a dollar", j("password=$", r(DIG, 3), r(ALNUM, 8))),
    ("non-ascii password", j("password=", "pässwörd", r(DIG, 4))),
    ("atlassian api token", j("ATA", "TT3xFfGF0", r(URLSAFE, 180), "=", r(HEX.upper(), 8))),
    ("linear api key", j("lin", "_api_", r(ALNUM, 40))),
    ("notion token", j("nt", "n_", r(DIG, 11), r(ALNUM, 35))),
    ("doppler token", j("dp", ".st.", r(LOW + DIG, 40))),
    ("pulumi token", j("pu", "l-", r(HEX, 40))),
    ("postman key", j("PM", "AK-", r(HEX, 24), "-", r(HEX, 34))),
    ("new relic user key", j("NR", "AK-", r(UP + DIG, 27))),
    ("grafana service account token", j("gl", "sa_", r(ALNUM, 32), "_", r(HEX, 8))),
    ("sentry user token", j("sn", "tryu_", r(HEX, 64))),
    ("square access token", j("sq", "0atp-", r(URLSAFE, 22))),
    ("planetscale token", j("psc", "ale_tkn_", r(URLSAFE, 43))),
    ("supabase token", j("sb", "p_", r(HEX, 40))),
    ("alibaba access key id", j("LT", "AI", r(ALNUM, 20))),
    ("flutterwave secret key", j("FLW", "SECK_TEST-", r(HEX, 32), "-X")),
    ("figma token", j("fi", "gd_", r(URLSAFE, 40))),
    ("contentful token", j("CFP", "AT-", r(URLSAFE, 43))),
    ("groq key", j("gs", "k_", r(ALNUM, 52))),
    ("tailscale key", j("tsk", "ey-auth-", r(ALNUM, 12), "-", r(ALNUM, 32))),
    ("terraform cloud token", j(r(ALNUM, 14), ".atl", "asv1.", r(URLSAFE, 67))),
    ("mapbox secret token", j("s", "k.eyJ1Ijoi", r(ALNUM, 60), ".", r(URLSAFE, 22))),
    ("okta ssws header", j("Authorization: SSWS 00", r(URLSAFE, 40))),
    ("curl -u user:password", j("curl -u admin:", _pw(), " https://api.example.com/v1")),
    ("cli --password flag", j("deploy --user ci --password ", _pw())),
    ("ini passwd", j("[db]\nhost = db1\npasswd = ", _pw())),
    ("json api_key", j('{"api_key":"', r(ALNUM, 32), '"}')),
    ("yaml auth_token", j("auth_token: ", r(URLSAFE, 40))),
    ("private_token header", j("PRIVATE-TOKEN: ", r(URLSAFE, 20))),
    ("x-api-key header", j("X-Api-Key: ", r(ALNUM, 40))),
]

# Ordinary field-report text: hashes, digests, UUIDs, identifiers, paths, and code that
# computes a credential rather than carrying one.
_H40 = [r(HEX, 40) for _ in range(6)]
_H64 = [r(HEX, 64) for _ in range(4)]
_UUID = [j(r(HEX, 8), "-", r(HEX, 4), "-4", r(HEX, 3), "-a", r(HEX, 3), "-", r(HEX, 12)) for _ in range(4)]

ORDINARY: list[str] = [
    f"fixed in {_H40[0]}",
    f"regression since commit {_H40[1]} (bisected)",
    f"git show {_H40[2][:12]} reproduces it",
    f"merge {_H40[3]} into {_H40[4]} conflicts on the lockfile",
    f"https://github.com/example/repo-a/commit/{_H40[5]}",
    f"sha256:{_H64[0]} is the image digest",
    f"image registry.example.com/app@sha256:{_H64[1]} fails to start",
    f"checksum {_H64[2]} does not match the release",
    f"sha512 digest {_H64[3]}{_H64[2]} mismatch",
    f"request id {_UUID[0]} timed out",
    f"trace {_UUID[1]} span {_UUID[2][:16]}",
    f"the fixture's tenant is {_UUID[3]}",
    "etag W/\"5e8f2d1a9b7c3e4f\" not honoured",
    "md5 9e107d9d372bb6826bd81d3542a419d6 of the tarball",
    "IndexBuilderFactoryConfigurationProviderImplementation is too long a name",
    "a_really_long_identifier_name_in_the_indexer_module_is_confusing",
    "test_roster_add_refuses_the_home_parent_directory_with_exit_one fails",
    "src/m1nd/readmodel/incremental_refresh_of_the_union_index.py line 120",
    "/home/agent-a/src/repo-a/node_modules/@example/very-long-package-name/dist/index.js",
    "C:\\Users\\agent-a\\AppData\\Local\\Temp\\build-output-2026-05-01\\log.txt",
    "~/work/repo-a/.env.example is fine to commit",
    "the file tests/__snapshots__/test_snapshots.ambr changed",
    "token=next(it) in the lexer loop skips one",
    "secret = vault.read(path) returns None on a cold start",
    "csrf_token=missing in the form post",
    "password = getpass.getpass()",
    "token = get_token()",
    'token = os.environ["TOKEN"]',
    "api = Client(token=os.getenv('API_TOKEN'))",
    "password_hash = bcrypt.hashpw(pw, salt)",
    "token = request.headers.get('X-Token')",
    "if token == expected_token: return",
    "api_key: ${API_KEY}",
    "password: <redacted>",
    "password=[REDACTED] in the copied log",
    "PGPASSWORD=$PGPASSWORD psql -h db",
    "token: null",
    "secret: true",
    "apiKey: process.env.API_KEY",
    "accessToken = await auth.refresh(session)",
    "clientSecret: config.clientSecret",
    "\"password\": \"\"",
    "the password reset flow sends two emails",
    "password field is not masked on the login form",
    "the token expired after 3600 seconds",
    "tokens are counted per request; the token budget ran out",
    "the tokenizer splits on = signs",
    "secrets manager integration is missing a retry",
    "rotate the API key yearly; the secret key is in the vault",
    "Authorization header missing on the redirect",
    "the Bearer token was not forwarded by the proxy",
    "Basic auth is disabled in production",
    "postgres://localhost:5432/app_test has no password in CI",
    "redis://cache.internal:6379/0 refused the connection",
    "git@github.com:example/repo-a.git push rejected",
    "https://example.com/login?next=/home works",
    "see https://docs.example.com/api/v2/reference#section-authentication",
    "mysql -u root -p prompts for the password",
    "docker login registry.example.com asks for a password",
    "machine learning model weights are large",
    "AKIA is the prefix of an access key id",
    "ghp_ tokens are classic GitHub tokens; use fine-grained ones",
    "sk-learn is not a package name, scikit-learn is",
    "xoxb- prefix tokens are for bots",
    "-----BEGIN PUBLIC KEY----- blocks are fine to publish",
    "BEGIN CERTIFICATE is printed by openssl",
    "base64 snippet dGhpcyBpcyBmaW5l= decodes to text",
    "the jwt library rejects alg none",
    "eyJ is how a JSON object starts in base64",
    "npm ERR! code E404 for @example/missing-package",
    "pip install m1nd==0.4.2 fails on python 3.13",
    "version 1.2.3-rc.4+build.5678 was tagged",
    "uv.lock hash mismatch for package-name-with-dashes",
    "mean latency 123.4ms, p99 512ms, 20 requests",
    "exit code 137 after 45 minutes",
    "x=1, y=2, z=3",
    "env LOG_LEVEL=debug RUST_BACKTRACE=1",
    "unicode: naïve café résumé – em dash — ellipsis …",
    "a format string with a literal \\n and \\t in it",
    "multi-line:\nfirst line\n\tindented second line\r\nthird",
    "the keyboard layout is dvorak",
    "key_count=14 after the migration",
    "max_tokens=4096 is the limit",
    "num_secrets=0 in the report",
    "password_min_length=12 is enforced",
    "token_type=bearer in the response",
    "the secret_name is db-credentials",
    "session_id 20260501T100000Z-agent-a-0042 restarted",
    "the build id is 2026.05.01.1234 on runner-linux-x64-07",
    "dependency graph has 1,204 nodes and 9,876 edges",
    "the base64 of 'hello' is aGVsbG8=",
    "CamelCaseComponentNameForTheSettingsPanelView renders twice",
    "kebab-case-component-name-for-the-settings-panel renders twice",
    "SCREAMING_SNAKE_CASE_CONSTANT_FOR_THE_MAX_RETRY_COUNT is 5",
    "the column user_password_last_changed_at is nullable",
    "README says set GITHUB_TOKEN in the environment",
    "export PATH=$HOME/.local/bin:$PATH",
    "the regex [A-Za-z0-9]{40} matches commit hashes",
    "commit 3f9a2c7e4b1d8f0a6c5e2d9b7a4f1c3e8d0b6a2f and tag v2.0.0",
    "hex id deadbeefcafebabe0123456789abcdef in the log",
    "blob 0123456789abcdef0123456789abcdef01234567 missing from the pack",
    "snapshot name test_sweep_document_for_an_empty_spool_with_no_boxes",
    "cursor at byte 305419896 of 303000000",
    "the lock file state/locks/box-3a4b5c6d7e8f9a0b.lock stays",
    "box index state/boxes/0f1e2d3c4b5a6978.idx rebuilt",
    "the client_id is public, the redirect uri is https://example.com/cb",
    "token budget: 128k tokens",
    "secret santa assignment sent",
]
