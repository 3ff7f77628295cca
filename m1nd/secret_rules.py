"""m1nd's own secret rules, layered over the scanner's catalog (see secrets.py).

`match(text)` judges one letter's text (decoded or raw) and returns the kind of
likely secret it carries, never the secret.  In doubt a letter is held; what is
plainly not a secret is let through: a placeholder (`<redacted>`, `${TOKEN}`,
`$TOKEN`, `***`, `null`), code that computes the value (`next(it)`,
`vault.read(path)`, `os.environ["X"]`, `config.token`), a comparison (`token ==
x`), a path, and in prose (`password: failed`) a plain word.

Every rule needs one of the ANCHOR terms to match: the prefilter (in the compiled
engine, or in Python) finds candidate lines by ANCHOR alone, so a rule without an
anchor term would never be asked.

Long because it is a data table of rules: the anchor, the rules and their
exceptions are patterns built from one another, read (and reviewed) best in one place.
"""

from __future__ import annotations

from m1nd import lazyre as re  # compiled on first use: a git hook with nothing to scan never pays

from m1nd.secret_providers import NAMES as _PROVIDER_NAMES

# -- the anchor: rules valid both for the engine (Rust syntax) and `re` --
# They find the lines worth judging, in one pass over a whole batch: a credential word
# followed by a separator (a word in prose is not), a command or header that carries
# one, a known prefix, a provider's name with a long token after it, or a long token
# whose letters and digits interleave the way random ones do (hex digests, UUIDs,
# identifiers and paths do not).  Every rule below needs one of these to be asked.
_T = r"A-Za-z0-9_+/=-"  # token characters
_NAME = r"[A-Za-z0-9_.-]"  # the rest of a name after its credential word


def _name_except(words: tuple[str, ...]) -> str:
    """A name's rest (`_NAME*`) that is none of `words` (lowercase, matched in any
    case): built as the complement of their trie, since neither the engine nor `re`
    may use a lookaround here."""
    def branch(suffixes: set[str]) -> str:
        if suffixes == {""}:
            return _NAME + "+"  # the word itself: only a longer name is left
        firsts = sorted({w[0] for w in suffixes if w})
        other = "".join(c + c.upper() for c in "abcdefghijklmnopqrstuvwxyz" if c not in firsts)
        alts = [] if "" in suffixes else [""]
        alts.append("[" + other + "0-9_.-]" + _NAME + "*")
        alts += [c + "(?:" + branch({w[1:] for w in suffixes if w[:1] == c}) + ")" for c in firsts]
        return "|".join(alts)
    return "(?:" + branch(set(words)) + ")"


# A credential word, the rest of its name, quotes, blanks and a separator: an
# assignment.  One engine rule per word, written so that an exception's name before
# its message (`KeyError: 'repo-a'`, in every Python traceback) is no hit at all:
# each hit the engine reports costs it several microseconds.
_SEP = r"(?::=|=>|=|:)"
_QUOTE = r"[\\\"'`]"
_BLANK = r"(?:[ \t]|\\[tn])"
_EXCEPTION_WORDS = ("error", "exception", "warning")


def _assigned(word: str) -> str:
    return (f"(?i:{word}(?:{_NAME}*{_QUOTE}+{_BLANK}*{_SEP}|{_NAME}*{_BLANK}+{_SEP}"
            f"|{_NAME}*(?::=|=>|=)|{_name_except(_EXCEPTION_WORDS)}:))")


_ANCHOR_KEYWORDS = tuple(_assigned(w) for w in ("pass", "pwd", "secret", "token", "credential", "auth", "key")) + (
    r"(?i:(?:bearer|ssws|basic|token)[ \t]+[A-Za-z0-9._~+/-]{8})", r"(?i:sig=)", r"(?i:-----begin)",
    r"(?i:mysql[^\n]*[ \t]-p)", r"(?i:docker[ \t]+login)", r"(?i:curl[^\n]*[ \t]-(?:u|-user)[ \t])",
    r"(?i:machine[ \t])",
    r"(?i:--(?:password|passwd|pass|token|secret|api-key|apikey|client-secret|auth-token)[ \t=])",
    r"(?i:://[^\s/@]*:[^\s/@]*@)", r"(?i:(?:\\u[0-9a-f]{4}){4})", r"(?i:\\n[a-z0-9+/]{40})", r"(?i:webhook)",
    r"(?i:hooks\.zapier)", r"(?i:secret[_.-]?(?:access[_.-]?)?key[^\n]{0,80}?[0-9a-f]{48})",
)
# A random run: a letter past f beside a digit (`_BESIDE`) and, in the same run of
# token characters, before or after it, a letter-digits-letter island (`_ISLAND`);
# or a short word prefix before 24 hex digits.  No bound between the two: a bounded
# repeat costs the engine a third of its whole pass.
_BESIDE = r"(?:[g-zG-Z][0-9]|[0-9][g-zG-Z])"
_ISLAND = r"[A-Za-z][0-9]+[A-Za-z]"
_HEX_AFTER_WORD = r"[A-Za-z]{2}[_-](?:[A-Za-z0-9]+[_-])?[0-9a-fA-F]{24}"
_RANDOM_RUN = f"{_BESIDE}[{_T}]*{_ISLAND}|{_ISLAND}[{_T}]*{_BESIDE}|{_HEX_AFTER_WORD}"
# The same for `re`, which backtracks: from the start of a run it takes the first
# such piece once for all (an atomic group), so a 64 KiB run of `g1-g1-…` costs
# linear time, not quadratic.  Equal to the engine's rule: any later piece ends
# after the first one's end.
_RUN_START = f"(?<![{_T}])"
_RANDOM_RUN_RE = (f"{_RUN_START}(?>[{_T}]*?{_BESIDE})[{_T}]*{_ISLAND}"
                  f"|{_RUN_START}(?>[{_T}]*?{_ISLAND})[{_T}]*{_BESIDE}|{_HEX_AFTER_WORD}")
_PREFIXES = (
    r"MII[A-Za-z0-9+/]{20}|b3BlbnNzaC|AKIA|ASIA|ABIA|ACCA|AKID|LTAI|gh[pousr]_|github_pat_|gl[a-z]{1,5}-"
    r"|xox[a-z]-|xapp-|sk-|[sr]k_|whsec_|AIza|GOCSPX-|npm_|hf_|pypi-|SG\.|SK[0-9a-f]{32}|key-[0-9a-f]{32}"
    r"|[0-9a-f]{32}-us[0-9]|shp[a-z]{2}_|:AA[A-Za-z0-9_-]{30}|AGE-SECRET|hv[sbr]\.|do[opr]_v1_|dapi[0-9a-f]{32}"
    r"|AccountKey=|eyJ|hooks\.slack\.com|/api/webhooks/|ATATT|lin_api_|ntn_|dp\.[a-z]{2,5}\.|pul-|PMAK-"
    r"|NRAK-|glsa_|glc_|sntry|sq0|EAAA|pscale_|sbp_|FLWSECK|figd_|CFPAT-|gsk_|tskey-|atlasv1|r8_|pplx-"
    r"|bkua_|shippo_|dckr_pat_|ya29\.|1//0|FlyV1"
    r"|flb_live_|NR(?:BR|II|JS)-|NRAL|-NRMA|NF-|thog-key-|BBFF-|1000\.[0-9a-f]{32}|amzn\.mws\.|\$production\$"
    r"|[0-9]/[0-9]{16}:|ATBB|API-[A-Z0-9]{26}|pat-(?:na|eu)[0-9]-|sk\.[A-Za-z0-9]{3}\.|[01]\.A[A-Za-z0-9_-]{50}"
    r"|\.v1\.eyJ|na1\.[A-Za-z0-9+/]{40}"
)
# provider names (secret_providers.py): the rule beside them looks for the token
_CONTEXT = "|".join(n.replace(".", r"\.") for n in _PROVIDER_NAMES)
# one engine rule per part: the engine verifies its literal hits rule by rule, and
# an alternation of many rules verifies every hit against all of them
ANCHOR_PARTS = _ANCHOR_KEYWORDS + ("(?i:" + _CONTEXT + ")", _RANDOM_RUN, _PREFIXES)
ANCHOR = "|".join(ANCHOR_PARTS)
# For `re`, which backtracks, the rest of a name is at most NAME_MAX characters: from
# every start inside a long run of name characters (`tokentoken…`, 64 KiB of it in a
# box line someone pushed) an unbounded one is read to the run's end, a quadratic
# cost.  The engine does not backtrack and keeps the unbounded rule.
NAME_MAX = 80


def _bounded(pattern: str) -> str:
    return pattern.replace(_NAME + "*", _NAME + "{0,%d}" % NAME_MAX).replace(_NAME + "+", _NAME + "{1,%d}" % NAME_MAX)


ANCHOR_BYTES = re.compile("|".join(_RANDOM_RUN_RE if p == _RANDOM_RUN else _bounded(p) for p in ANCHOR_PARTS).encode())
# an exception's name before its message (`KeyError: 'repo-a'`, in every Python
# traceback) meets the keyword anchor but assigns nothing: such a hit alone makes no
# line worth judging
_EXCEPTION_NAME = re.compile(rb"(?i)(?:pass|pwd|secret|token|credential|auth|key)[a-z]*(?:error|exception|warning):\Z")


def anchor_hit_counts(hit: bytes) -> bool:
    """Whether an anchor's hit (the bytes it matched) makes its line worth judging."""
    return not _EXCEPTION_NAME.match(hit)


def has_anchor(raw: bytes) -> bool:
    return any(anchor_hit_counts(m.group(0)) for m in ANCHOR_BYTES.finditer(raw))

# a long run of token characters mixing digits with non-hex letters or symbols: what
# a catalog token looks like (a hash, a UUID or an identifier is not one)
_RUN = re.compile(rb"[A-Za-z0-9_+/=-]{16,}")
_NON_HEX = re.compile(rb"[g-zG-Z_+/=]")
_DIGIT = re.compile(rb"[0-9]")


def mixed_run(raw: bytes) -> bool:
    """Whether `raw` has such a run (linear: no lookahead rescans a long run)."""
    for m in _RUN.finditer(raw):
        run = m.group(0)
        if _DIGIT.search(run) and _NON_HEX.search(run):
            return True
    return False


# -- decoding ---------------------------------------------------------------------
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|(.))", re.S)
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "b": " ", "f": " "}


def _unescape(m: re.Match) -> str:
    if m.group(1):
        return chr(int(m.group(1), 16))
    c = m.group(2)
    return _SIMPLE.get(c, c)


def decode_escapes(text: str) -> str:
    """JSON string escapes decoded in place (`\\u0067` → `g`, `\\n` → newline,
    `\\"` → `"`), whether or not the text is valid JSON; surrogate pairs joined."""
    if "\\" not in text:
        return text
    out = _ESCAPE.sub(_unescape, text)
    if any("\ud800" <= c <= "\udfff" for c in out):
        out = out.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return out


# -- judging values ---------------------------------------------------------------
_PLACEHOLDER_WORDS = frozenset(
    "none null nil true false undefined missing empty unset unknown hidden masked redacted placeholder "
    "example required optional string str bytes int any object na n/a tbd todo fixme changeit your_password "
    "password passwd secret token value key apikey api_key not_set notset default".split())
_CODE = re.compile(
    r"(?:await|new|lambda|function|yield|async)\s"  # a complete call or index, or a dotted name
    r"|[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)*\s*(?:\([\w$.,:=\s\"'\[\]-]*\)|\[[^\]\n]*\])"
    r"|[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)+\Z")
_PATH = re.compile(r"(?:~|\.{1,2})?/[\w./-]*\Z")
_VAR = re.compile(r"\$(?:\{|\(|[A-Z_][A-Z0-9_]*\Z|[a-z_][a-z0-9_]*\Z)|%[\w(]|\{\{")


def is_placeholder(value: str) -> bool:
    v = value.strip().strip("\"'`")
    low = v.lower()
    if len(v) < 3 or low in _PLACEHOLDER_WORDS:
        return True
    if v[0] in "<[{(*" or low.startswith(("xxx", "...", "…", "redacted")):
        return True
    if _VAR.match(v) or set(low) <= set("*x.#?-_•"):
        return True
    return False


def _random_looking(v: str) -> bool:
    """A token in prose that reads like a credential: digits with letters, a symbol,
    or mixed case inside the word (not a plain word)."""
    has_digit = any(c.isdigit() for c in v)
    has_alpha = any(c.isalpha() for c in v)
    if has_digit and has_alpha:
        return True
    if any(not c.isalnum() and c not in "-_." for c in v) and len(v) >= 6:
        return True
    return any(c.isupper() for c in v[1:]) and any(c.islower() for c in v) and len(v) >= 8


# -- the rules --------------------------------------------------------------------
_BLOCK = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_NB = r"(?<![A-Za-z0-9])"  # no token character right before a prefix
_PREFIX_TOKEN = re.compile(
    _NB + r"(?:"
    r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])|AKID[A-Za-z0-9]{32}|LTAI[A-Za-z0-9]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}"
    r"|gl(?:pat|rt|dt|ptt|cbt|oas|soat|ft|imt|agent|ffct)-[A-Za-z0-9_-]{20,}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,}"
    r"|sk-(?:[a-z]+-)?[A-Za-z0-9_-]{20,}|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{20,}"
    r"|AIza[A-Za-z0-9_-]{35}|GOCSPX-[A-Za-z0-9_-]{20,}|npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])|hf_[A-Za-z0-9]{30,}"
    r"|pypi-AgE[A-Za-z0-9_-]{50,}|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}|SK[0-9a-f]{32}(?![0-9a-f])"
    r"|key-[0-9a-f]{32}|[0-9a-f]{32}-us\d{1,2}\b|shp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}"
    r"|\d{8,10}:AA[A-Za-z0-9_-]{30,}|AGE-SECRET-KEY-1[0-9A-Z]{50,}|hv[sbr]\.[A-Za-z0-9_-]{20,}"
    r"|do[opr]_v1_[0-9a-f]{64}|dapi[0-9a-f]{32}|ATATT3[A-Za-z0-9_=-]{50,}|lin_api_[A-Za-z0-9]{30,}"
    r"|ntn_[A-Za-z0-9]{30,}|dp\.(?:st|ct|sa|scim|audit|pt)\.[A-Za-z0-9_-]{30,}|pul-[0-9a-f]{40}"
    r"|PMAK-[0-9a-f]{24}-[0-9a-f]{34}|NRAK-[A-Z0-9]{27}|gl(?:sa|c)_[A-Za-z0-9_]{30,}"
    r"|sntry[su]_[A-Za-z0-9_=+/]{40,}|sq0(?:atp|csp)-[A-Za-z0-9_-]{20,}|EAAA[A-Za-z0-9_-]{60,}"
    r"|pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{30,}|sbp_[0-9a-f]{40}|FLWSECK(?:_TEST)?-[0-9a-f]{32}-X"
    r"|figd_[A-Za-z0-9_-]{30,}|CFPAT-[A-Za-z0-9_-]{40,}|gsk_[A-Za-z0-9]{40,}"
    r"|tskey-(?:auth|api|client)-[A-Za-z0-9]+-[A-Za-z0-9]{20,}|[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_-]{60,}"
    r"|sk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}|r8_[A-Za-z0-9]{30,}|pplx-[A-Za-z0-9]{40,}"
    r"|bkua_[A-Za-z0-9]{30,}|shippo_(?:live|test)_[A-Za-z0-9]{30,}|dckr_pat_[A-Za-z0-9_-]{20,}"
    r"|ya29\.[A-Za-z0-9_-]{30,}|1//0[A-Za-z0-9_-]{40,}|FlyV1 fm\d_[A-Za-z0-9_+/=-]{40,}"
    # trufflehog detectors fleetbase, newrelic{browserkey,insightsinsertkey,licensekey,mobileapptoken},
    # nightfall, trufflehogenterprise, ubidots, zohocrm, bitbucketapppassword, octopusdeploy,
    # hubspot_apikey/v2, mapbox, azure_entra/refreshtoken, airtableoauth, fullstory/v2;
    # secrets-patterns-db aws_mws_key, braintree_access_token, asana_pat
    r"|flb_live_[A-Za-z0-9]{20,}|NR(?:BR|II|JS)-[A-Za-z0-9_-]{19,}|[0-9a-fA-F]{36}NRAL|AA[0-9a-f]{40}-NRMA"
    r"|NF-[A-Za-z0-9]{32}(?![A-Za-z0-9])|thog-key-[0-9a-f]{16}|BBFF-[A-Za-z0-9]{30}"
    r"|1000\.[0-9a-f]{32}\.[0-9a-f]{32}|amzn\.mws\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"|access_token\$production\$[0-9a-z]{16}\$[0-9a-f]{32}|[0-9]/[0-9]{16}:[A-Za-z0-9]{32}(?![A-Za-z0-9])"
    r"|ATBB[A-Za-z0-9_=.-]{24,}|API-(?=[A-Z]*[0-9])[A-Z0-9]{26,32}(?![A-Za-z0-9])"
    # trufflehog rootly, sourcegraphcody, spectralops, langsmith, iexapis, intra42: a provider's
    # prefix before a digest-sized hex body, which the generic rule leaves to this list
    # (`pip-<sha256>`, `fix-<sha1>` are not credentials)
    r"|(?:rootly|slk)_[0-9a-f]{64}(?![0-9a-f])|spu-[0-9a-f]{32}(?![0-9a-f])|s-s4t2(?:ud|af)-[0-9a-f]{64}"
    r"|lsv2_(?:pt|sk)_[0-9a-f]{32}_[0-9a-f]{10}(?![0-9a-f])|[sp]k_[0-9a-f]{32}(?![0-9a-f])"
    r"|pat-(?:na|eu)[0-9]-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"|sk\.[A-Za-z0-9.-]{80,240}|[01]\.A[A-Za-z0-9_-]{50,}\.[A-Za-z0-9_-]{100,}"
    r"|[A-Za-z0-9]{10,}\.v1\.eyJ[A-Za-z0-9_-]{20,}\.[a-f0-9]{32,}|na1\.[A-Za-z0-9+/]{100}"
    r"|gl(?:sa|c)_[A-Za-z0-9_+/=]{30,}"
    r")|1//0[A-Za-z0-9_-]{40,}")
_CLOUD = re.compile(r"AccountKey=[A-Za-z0-9+/]{20,}|[?&]sig=[A-Za-z0-9%+/=]{20,}|SharedAccessKey=[A-Za-z0-9+/=]{20,}")
_JWT = re.compile(_NB + r"eyJ[A-Za-z0-9_-]{8,}\.(?:eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
                     r"|[A-Za-z0-9_-]{40,}\.[A-Za-z0-9_-]{40,})")  # trufflehog flightlabs: an encrypted body
_WEBHOOK = re.compile(
    r"hooks\.slack\.com/(?:services|workflows)/T[A-Za-z0-9_]+/[A-Za-z0-9_]+/[A-Za-z0-9_]{8,}"
    r"|discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}")
_KEY_BODY = re.compile(
    r"(?m)^[ \t\"']*(?:MII[A-Za-z0-9+/]{40,}|b3BlbnNzaC1rZXktdjE[A-Za-z0-9+/]{20,})"
    r"|^[ \t]*[A-Za-z0-9+/]{60,}={0,2}[ \t]*\n[ \t]*[A-Za-z0-9+/]{60,}")
_URL_CRED = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]{0,31}://[^\s/:@\"'<>]*:([^\s/@\"'<>]+)@[^\s/\"'<>]")
_HEADER = re.compile(
    r"(?i)\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|ssws|digest|apikey|key)\s+"
    r"([A-Za-z0-9._~+/=-]{8,})")
_BARE_BEARER = re.compile(r"(?i)\b(?:bearer|ssws)\s+([A-Za-z0-9._~+/-]{20,}=*)")
_COMMANDS = (
    re.compile(r"(?i)\bmysql(?:dump|admin|sh)?\b[^\n]*?\s-p(?!\s)([^\s]{3,})"),
    re.compile(r"(?i)\bdocker\s+login\b[^\n]*?\s(?:-p|--password)(?:\s+|=)(?!-)(\S{3,})"),
    re.compile(r"(?i)\bcurl\b[^\n]*?\s(?:-u|--user)\s+[\"']?[^\s:\"']+:([^\s\"']{3,})"),
    re.compile(r"(?i)(?<![\w-])--(?:password|passwd|pass|token|secret|api-key|apikey|client-secret|auth-token)"
               r"(?:\s+|=)[\"']?(?!-)([^\s\"']{3,})"),
    re.compile(r"(?i)\bmachine\s+\S+(?:\s+login\s+\S+)?\s+password\s+(\S{3,})"),
)
_KEY_WORD = (
    r"(?i:pass(?:wor|w)?d|passphrase|pwd|secret|token|credentials?"
    r"|(?:api|access|secret|private|auth|signing|encryption|master|account|client|app|service|session)[_.-]?key)"
)
_ASSIGN = re.compile(
    r"(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]{0,80}?" + _KEY_WORD
    + r"[\"'`]?[ \t]*(?P<sep>:=|=>|===?|=|:)[ \t]*(?=(?P<rest>[^\n]{0,200}))")
# a credential word inside a longer name (`my_password_super_secure = "…"`, `db_pass: …`):
# held only when the value reads as random, since such names also name plain settings
_NAMED = re.compile(
    r"(?i)(?<![A-Za-z0-9])[A-Za-z0-9_.-]{0,80}?(?:passw(?:or)?d|pass|passphrase|secret|token|api_?key)[A-Za-z0-9_]{0,80}"
    r"[\"'`]?[ \t]*(?::=|=>|=|:)(?=[ \t]*[\"'`]?([^\s\"'`,;]{8,200}))")  # a lookahead: `api_key: db_pass: …` tries both names
_ASSIGN_WORDS = ("pass", "pwd", "secret", "token", "credential", "key")
_UNQUOTED = re.compile(r"[^\s\"'`,;&)\]}>]+")


def _assignment(text: str) -> bool:
    if not any(w in text.lower() for w in _ASSIGN_WORDS):  # a substring test is ~50x cheaper
        return False
    for m in _ASSIGN.finditer(text):
        sep, rest = m.group("sep"), m.group("rest")
        if sep.startswith("==") or m.start("sep") > 0 and text[m.start("sep") - 1] in "!<>":
            continue
        if rest and rest[0] in "\"'`":
            q = rest[0]
            end = rest.find(q, 1)
            value = rest[1:end] if end > 0 else rest[1:]
            if not is_placeholder(value) and not (end < 0 and _CODE.match(value)):
                return True
            continue
        um = _UNQUOTED.match(rest)
        if not um:
            continue
        value = um.group(0).rstrip(":")
        if is_placeholder(value) or _CODE.match(rest) or _CODE.match(value) or _PATH.match(value):
            continue
        if sep == ":" and not _random_looking(value):
            continue  # prose or YAML with a plain word: "password: failed"
        return True
    return False


def _key_body(text: str) -> bool:
    for m in _KEY_BODY.finditer(text):
        s = m.group(0)
        if s.lstrip(" \t\"'").startswith(("MII", "b3BlbnNzaC")) or (
                any(c.isupper() for c in s) and any(c.islower() for c in s) and any(c.isdigit() for c in s)):
            return True
    return False


# -- generic shapes: what the providers' formats share (judged on the decoded text) --
# Each entry: (kind, source, pattern).  The sources are the public rule sets whose
# test suites these shapes were measured against (see docs/secrets.md).
_TOKEN_CHARS = r"A-Za-z0-9_+/=.!-"
GENERIC = [
    ("token with a provider prefix",
     "trufflehog detectors (pkg/detectors/*), secrets-patterns-db: a short lowercase or upper prefix, "
     "a separator, a long random body",
     re.compile(r"(?<![A-Za-z0-9_./+=-])(?:[A-Za-z][A-Za-z0-9]{0,11}[_.-]){1,4}[A-Za-z0-9_.-]{16,}")),
    ("random token",
     "detect-secrets high-entropy plugins, trufflehog keyword detectors: a long run mixing upper, "
     "lower case and digits",
     re.compile(r"(?<![A-Za-z0-9_./+=:-])[A-Za-z0-9_+/=.!-]{20,400}(?![A-Za-z0-9_+/=.!-])")),
    ("webhook url",
     "trufflehog microsoftteamswebhook, tineswebhook, zapierwebhook: the url is the credential",
     re.compile(r"\.webhook\.office\.com/webhookb2/\S{20,}|(?<![a-zA-Z0-9])[a-zA-Z0-9]{1,63}\.tines\.com/webhook/[a-z0-9]{16,}/[a-z0-9]{16,}"
                r"|hooks\.zapier\.com/hooks/catch/\S{8,}")),
]
# detect-secrets ibm_cos_hmac: an HMAC secret access key is 48 hex digits (no digest has
# that length), held beside the name of a secret key only
_HMAC_SECRET = re.compile(
    r"(?i)secret[_.-]?(?:access[_.-]?)?key[^\n]{0,80}?(?<![0-9A-Za-z])[0-9a-f]{48}(?![0-9A-Za-z])")
_BESIDE_PROVIDER = re.compile(
    r"(?i)(?<![a-z0-9])(?:" + "|".join(re.escape(n) for n in _PROVIDER_NAMES) + r")[a-z0-9_]{0,40}"
    r"[^\n]{0,40}?(?<![A-Za-z0-9_./+=:-])([A-Za-z0-9_/+-]{16,90}=*)(?![A-Za-z0-9_/+=.-])")
_KEY_VALUE = re.compile(
    r"(?i)[a-z0-9][_.-]?(?:key|secret)[\\\"'`]*[ \t]*[:=][ \t]*[\\\"'`]*([A-Za-z0-9_/+.-]{16,200}=*)")
_BLOB_BEFORE = re.compile(r"(?:base64,|sha\d+[-:]|h1:|integrity\W+|hash\W+|sum\W+|@)\Z", re.I)


_BLOB_AFTER = re.compile(r"[A-Za-z0-9+/=]")  # the prefixed shape cut out of a longer base64 run
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_PACKAGE = re.compile(r"\.(?:whl|tar|tgz|gz|zip|jar|egg)\b")  # a versioned file name, not a token
_DIGEST = re.compile(r"(?i)(?:sha|md|blake|xxh)\d*[-_]")


_NONHEX_NEXT_TO_DIGIT = re.compile(r"[g-zG-Z][0-9]|[0-9][g-zG-Z]")


def _class(c: str) -> int:
    return 0 if c.isdigit() else 1 if c.isupper() else 2 if c.islower() else 3


def _changes(body: str) -> int:
    """How often the character class (digit, upper, lower, symbol) changes: random
    tokens change every other character or so, words and numbered names rarely."""
    return sum(_class(a) != _class(b) for a, b in zip(body, body[1:]))


def _hexlike(body: str) -> bool:
    """A random hex body after a provider prefix (`rootly_…`, `spu-…`)."""
    return sum(c.isdigit() for c in body) >= 4 and sum(c.isalpha() for c in body) >= 4 \
        and _changes(body) >= 0.25 * len(body)


def _digest_sized(body: str) -> bool:
    """Lowercase hex of a digest's length (md5, sha1, sha256, sha512) or an object id's
    (24): what `pip-<sha256>` cache keys, `fix-<sha1>` branches and `evt_<24 hex>` ids
    carry after their word.  A provider token of this shape is in _PREFIX_TOKEN."""
    return len(body) in (24, 32, 40, 64, 128) and body == body.lower() and all(c in "0123456789abcdef" for c in body)


_WORD = re.compile(r"[A-Z][a-z]{3,}")


def _camel(body: str) -> bool:
    """Words glued in CamelCase (`Base64EncodingHelper2Factory`): two or more
    capitalised words with a vowel cover its letters; random base62 of 16 characters
    looks like that about once in a thousand."""
    letters = sum(c.isalpha() for c in body)
    words = [w for w in _WORD.findall(body) if any(v in w for v in "aeiouy")]
    return len(words) >= 2 and sum(len(w) for w in words) >= 0.8 * letters


def _mixed(body: str, need_upper: bool, rate: float = 0.25) -> bool:
    digits = sum(c.isdigit() for c in body)
    upper = sum(c.isupper() for c in body)
    lower = sum(c.islower() for c in body)
    if digits < 2 or lower + upper < 6 or _changes(body) < rate * len(body):
        return False
    if need_upper:
        # mixed case is no hex digest; the digits may sit in one run (`ABC123xKLmn…`)
        return upper >= 3 and lower >= 3 and digits >= 3 and not _camel(body)
    if not _NONHEX_NEXT_TO_DIGIT.search(body):  # lowercase: a letter past f beside a digit
        return False
    # lowercase with digits: not hex (a digest), not a word-and-number identifier
    return any(c in "ghijklmnopqrstuvwxyzGHIJKLMNOPQRSTUVWXYZ" for c in body) and digits >= 4


_CONSONANTS = re.compile(r"[bcdfghjklmnpqrstvwxz]{6}")


def _provider_key(value: str) -> bool:
    """A value beside its provider's name that reads as its key: random enough, or long
    with digits and letters in runs (detect-secrets' ibm/softlayer tests, trufflehog
    airvisual/alconost keys are lowercase with few digits)."""
    digits, alpha, changes = sum(c.isdigit() for c in value), sum(c.isalpha() for c in value), _changes(value)
    if digits >= 2 and alpha >= 4 and changes >= 0.25 * len(value):
        return True
    if len(value) >= 32 and digits >= 8 and alpha >= 8 and changes >= 5:
        return True
    if len(value) >= 16 and value.isalpha() and value.islower() and _CONSONANTS.search(value):
        return True  # trufflehog coinlib: letters only, but no word has six consonants in a row
    inner = value.rstrip("0123456789")
    return len(value) >= 24 and "_" not in value and sum(c.isdigit() for c in inner) >= 2 and changes >= 4 \
        and value.lower() == value


def _generic(text: str) -> str | None:
    prefixed, mixed, hooks = (g[2] for g in GENERIC)
    if hooks.search(text):
        return "webhook url"
    for m in prefixed.finditer(text):
        token = m.group(0)
        body = re.split(r"[_.-]", token)
        longest = max(body, key=len)
        if _BLOB_BEFORE.search(text[max(0, m.start() - 12):m.start()]) or _DIGEST.match(token):
            continue
        if len(token) > 200 and ("+" in token or "/" in token) or _BLOB_AFTER.match(text, m.end()):
            continue
        if len(longest) >= 16 and (_mixed(longest, need_upper=False) or _mixed(longest, need_upper=True)) \
                or len(longest) >= 16 and _hexlike(longest) and not _digest_sized(longest):
            return "token with a provider prefix"
        # a segmented body after a word prefix (`pat-eu1-1457aed5-04c6-…`, `sk.nc7.R5t.…`);
        # a dotted name (`com.apple.WebKit.…`) has word segments, so it is not one
        rest = "".join(body[1:])
        if body[0].isalpha() and len(body) >= 3 and len(rest) >= 20 and not _UUID.search(token) \
                and not _digest_sized(body[-1]) \
                and not _PACKAGE.search(token) \
                and not any(p.isalpha() and len(p) >= 5 for p in body[1:]) \
                and (_hexlike(rest) or _mixed(rest, need_upper=False) or _mixed(rest, need_upper=True)):
            return "token with a provider prefix"
    if _HMAC_SECRET.search(text):
        return "key beside its provider"
    low = text.lower()
    for pattern in (_BESIDE_PROVIDER, _KEY_VALUE):
        # substring tests first: both patterns start with a long alternation that costs
        # ~0.5 ms a line in `re`, and most judged lines name no provider
        if pattern is _BESIDE_PROVIDER and not any(n in low for n in _PROVIDER_NAMES) \
                or pattern is _KEY_VALUE and "key" not in low and "secret" not in low:
            continue
        for m in pattern.finditer(text):
            value = m.group(1)
            if _DIGEST.match(value) or _BLOB_BEFORE.search(text[max(0, m.start(1) - 12):m.start(1)]):
                continue
            if _provider_key(value):
                return "key beside its provider"
    for m in mixed.finditer(text):
        token = m.group(0)
        if token.count("/") > 1 or len(token) >= 100 and "=" not in token and ("+" in token or "/" in token) or _DIGEST.match(token) or _BLOB_BEFORE.search(text[max(0, m.start() - 12):m.start()]):
            continue
        pieces = re.split(r"[_.=-]", token)
        longest = max(pieces, key=len)
        if len(longest) >= 16 and _mixed(longest, need_upper=True):
            return "random token"
        # a random body cut by a few separators (trufflehog paypaloauth secret); words then
        # a digest-sized hex body (`Linux-Linux-Linux-<24 hex>`, a cache key) are not one,
        # as they are not after a prefix above
        joined = "".join(pieces)
        if len(pieces) <= 6 and len(joined) >= 32 and _mixed(joined, need_upper=True, rate=0.4) \
                and not (_digest_sized(pieces[-1]) and all(p.isalpha() for p in pieces[:-1])):
            return "random token"
    return None


def match(text: str) -> str | None:
    """The kind of likely secret `text` carries, or None."""
    if _BLOCK.search(text):
        return "private key block"
    if _PREFIX_TOKEN.search(text):
        return "token with a known prefix"
    if _CLOUD.search(text):
        return "cloud storage key"
    if _JWT.search(text):
        return "json web token"
    if _WEBHOOK.search(text):
        return "webhook url"
    if _key_body(text):
        return "private key body"
    for m in _URL_CRED.finditer(text):
        if not is_placeholder(m.group(1)):
            return "credentials in a url"
    for m in _HEADER.finditer(text):
        if not is_placeholder(m.group(1)):
            return "authorization header"
    for m in _BARE_BEARER.finditer(text):
        if _random_looking(m.group(1)):
            return "authorization header"
    for pattern in _COMMANDS:
        for m in pattern.finditer(text):
            if not is_placeholder(m.group(1)) and not _VAR.match(m.group(1)):
                return "command-line credential"
    if _assignment(text):
        return "credential assignment"
    for m in _NAMED.finditer(text):
        value = m.group(1)
        if not is_placeholder(value) and not _CODE.match(value) and not _PATH.match(value) \
                and _random_looking(value) and sum(c.isdigit() for c in value) >= 1 and len(set(value)) >= 6 \
                and not _camel(value):  # a class name (`token_cache: Base64Encoder2Factory`)
            return "credential assignment"
    return _generic(text)
