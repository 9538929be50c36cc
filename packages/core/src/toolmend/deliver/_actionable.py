"""Omit the steps an agent cannot take from third-party error text it is shown.

Error text is written for developers: "Run `gcloud auth login`", "Check your
configuration file", "Visit https://... to upgrade", "Contact your
administrator", "Please open an issue".  An agent without a shell or a browser
cannot take such a step, and one study measured recovery on expired
credentials falling from 82% to 45% when the error carried one (Xu, Sep 2026).

The filter works per sentence, deterministically, and favours precision: a
sentence is omitted only when it asks for one of those steps in so many words,
and never when it carries the cause.  The first sentence (which holds the
message's first clause) always stays, as does any sentence that names an
exception type, an HTTP status or an error code.  Each run of omitted sentences
becomes one visible :data:`MARKER`, so the model sees that something was cut.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MARKER", "WINDOW", "Filtered", "is_developer_step", "omit_developer_steps", "sentences"]

MARKER = "[a step for the developer was omitted]"
WINDOW = 8192
"""Characters filtered at each end of a long text: far more than a note quotes."""

# A sentence ends at . ! ? (not inside a number, a file name or a URL) followed by
# white space and a capital, a quote, a backtick or a bracket; or at a line break.
_BOUNDARY = re.compile(r"(?<=[.!?])[ \t]+(?=[A-Z\"'`(\[*])|\n+")

_CLI = (
    r"gcloud|gsutil|aws|az|kubectl|helm|npm|npx|pnpm|yarn|pip|pip3|pipx|uv|poetry|conda|brew"
    r"|apt|apt-get|yum|dnf|git|gh|docker|podman|heroku|firebase|terraform|ollama|supabase"
    r"|vercel|wrangler|stripe|python|python3|node|cargo|rustup|sudo|chmod|chown|systemctl"
    r"|ssh-keygen|openssl|huggingface-cli"
)
# A line's own prefix ("hint:", "npm error", "remote:"), then the step's lead-in.
_PREFIX = r"(?:(?:hint|note|remote|warning|tip|help)\s*:\s*|npm\s+(?:error|warn|ERR!)\s+|\W{0,4})?"
_LEAD = (
    r"(?:please\s+|kindly\s+|try\s+(?:to\s+)?|then\s+|or\s+|otherwise,?\s+|alternatively,?\s+"
    r"|you\s+(?:can|could|may|might|should|must|need\s+to|have\s+to|will\s+need\s+to)"
    r"\s+(?:also\s+|instead\s+)?|if\s+[^,.]{1,80},\s*|to\s+[^,.]{1,80},\s*)*"
)
_STEP_PATTERNS: tuple[str, ...] = (
    # A terminal command: "run `x`", a command line of its own, a flag to pass.
    r"\brun(?:ning)?\s+(?:`[^`]+`|'[^']+'|\"[^\"]+\")",
    rf"\b(?:run|execute|type|enter)\s+(?:{_CLI})\s+[a-z]",
    r"\brun(?:ning)?\b[^.!?]{0,60}:\s*$",
    r"\brun(?:ning)?\s+(?:one\s+of\s+the\s+following|the\s+following|an?\s+install)\b",
    r"\b(?:use|with|execute|type|enter)\s+(?:one\s+of\s+)?the\s+following\s+commands?\b",
    # A program's help: "Try 'tar --help'", "See 'kubectl logs --help'", "Type nasm -h".
    r"\b(?:see|try|use|type|run|enter)\s+[`'\"]?(?:[\w./:-]+\s+){0,5}?"
    r"(?:--?help|-h|--usage|help\s+[\w-]+[`'\"])(?![\w-])",
    # A program's own login: "Run `wandb login", "with 'railway login'".
    r"[`'\"][\w.-]+\s+(?:auth\s+)?login\b",
    r"\bif\b[^,.]{1,80},\s*(?:please\s+)?run\b",
    r"^\W*to\s+[^,.]{3,80},\s*(?:use|run|type)\W*$",
    rf"^{_PREFIX}(?:{_CLI})\s+(?:config|login|auth|install|init|help|setup|--help)\b(?!\s+\[)",
    r"\b(?:git\s+(?:config|help)|npm\s+(?:help|login|config))\b",
    r"\bin\s+(?:a|your|the)\s+(?:terminal|shell|command[- ]line|console\s+window)\b",
    r"\bon\s+the\s+command\s+line\b",
    r"\b(?:pass(?:ing)?|retry\s+this\s+command\s+with|re-?run\s+(?:it\s+)?with|omit)\s+--?[a-z]",
    r"\bwith\s+`?[A-Z][A-Z0-9]*_[A-Z0-9_]+=",
    # Installing or upgrading software.
    rf"^{_PREFIX}{_LEAD}(?:install|reinstall|upgrade|downgrade|update)\s+(?:the\s+|a\s+|your\s+)?"
    r"(?!\[)[\w`'\"@.-]+",
    r"\byou\s+can\s+(?:also\s+)?install\b",
    r"\bmake\s+sure\s+(?:that\s+)?you\s+have\s+[\w\s.-]{1,40}?\binstalled\b",
    r"\bcreate\s+a\s+virtual\s+environment\b",
    r"\b(?:pip|npm|pnpm|yarn|brew|apt|apt-get|conda|cargo|pipx)\s+install\s+(?![\[<`-])\w",
    # Configuration and the environment.
    r"\b(?:set|export|define|add|configure|update|change|edit|check|verify|review|fix|increase"
    r"|setting|adjust)\b[^.!?]{0,50}?\b(?:config(?:uration)?\s+(?:file|settings?|variable|key"
    r"|option)|your\s+config(?:uration)?|settings\s+file|credentials\s+file"
    r"|(?:proxy|firewall|network|dns|ssl|tls)\s+(?:settings|configuration))",
    r"\bthe\s+'?\w+'?\s+config(?:uration)?\s+is\s+set\b",
    r"\bcreate\s+an?\s+(?:[\w-]+\s+)?config(?:uration)?\s+file\b",
    r"\benvironment\s+variables?\b[^.!?]{0,60}\b(?:set|export|defin|provid|to\s+display)"
    r"|\b(?:set|export|define|provide)\b[^.!?]{0,40}\benvironment\s+variables?\b",
    r"(?-i:\b(?:set|export|Set|Export)\s+[A-Z][A-Z0-9]*_[A-Z0-9_]+\b)",
    # A web page to visit.
    r"\b(?:visit|go\s+to|navigate\s+to|head\s+to|see|refer\s+to|consult|check\s+out"
    r"|browse\s+to|sign\s+up\s+at|going\s+to|here|follow)\b[^.!?]{0,40}?https?://",
    r"\b(?:visit|see|check|consult|refer\s+to|read)\s+(?:the\s+|our\s+)?(?:[\w-]+\s+){0,2}"
    r"(?:documentation|docs|dashboard|console|portal|status\s+page|help\s+(?:center|page)"
    r"|faq|guide|website|knowledge\s+base|billing\s+page|settings\s+page|web\s*page)\b",
    r"\b(?:visit|check|see)\s+(?:[\w-]+\.)+(?:com|io|org|dev|net|ai)\b",
    r"\b(?:for\s+more\s+(?:information|details|help)|to\s+learn\s+more|learn\s+more"
    r"|for\s+troubleshooting|more\s+details\s+here|for\s+(?:further\s+)?(?:details|guidance"
    r"|documentation)|background\s+on\s+this\s+error)\b",
    r"\b(?:here|console|dashboard)\s*:\s*(?:https?://|$)",
    r"\b(?:in|from)\s+the\s+(?:api|developer|cloud|google\s+cloud|aws|azure)\s+console\b",
    r"\b(?:in|from|on|at|via)\s+(?:the\s+|your\s+)(?:[\w-]+\s+){0,2}(?:developer|admin|management"
    r"|web|cloud|api)\s+(?:console|portal|dashboard)\b",
    # Contacting a person.
    r"\b(?:contact|reach\s+out\s+to|get\s+in\s+touch\s+with|email|e-mail|notify|ask)\s+"
    r"(?:us|sales|support|(?:your|the|an|our|a)\s+(?:[\w-]+\s+){0,2}(?:administrator|admin"
    r"|support|sysadmin|it\s+department|help\s*desk|account\s+manager|owner|organization"
    r"|team|provider|service\s+desk|developers?|maintainers?|sales))\b",
    r"\bsupport@|\bsupport\s+team\b|\bcustomer\s+support\b|\bwe\s+can\s+help\b",
    # Reporting a bug.
    r"\b(?:open|file|submit|report|create|raise|post)\s+(?:an?\s+|this\s+as\s+an?\s+)?(?:new\s+)?"
    r"(?:issue|bug(?:\s+report)?|ticket|support\s+request)\b",
    r"\breport\s+(?:this|it)\b|\bopening\s+an\s+issue\b",
    r"\bissue\s+tracker\b|(?<!docs\.)github\.com/[\w.-]+/[\w.-]+/issues\b",
    # A plan, billing, quota or account step.
    r"\bupgrade\s+(?:your|to\s+a|to\s+the|the)\s+(?:[\w-]+\s+){0,2}(?:plan|subscription"
    r"|account|tier|license)\b|\bpaid\s+(?:plan|tier|account)\b",
    r"\bupgrade\s+to\s+an?\s+(?:[\w-]+\s+){0,2}(?:key|version\s+of\s+your\s+account)\b",
    r"\b(?:use|switch\s+to|change\s+to)\s+(?:a\s+)?(?:different|another|higher|paid)\s+"
    r"(?:subscription|plan|tier|account)\b",
    r"\b(?:add|update)\s+(?:a\s+|your\s+|more\s+)?(?:payment\s+method|billing|credit\s+card"
    r"|credits?|funds)\b",
    r"\b(?:purchase|buy|top\s+up)\s+(?:more\s+)?(?:credits?|quota|funds|a\s+plan|a\s+subscription)\b",
    r"\b(?:add|buy|purchase|top\s+up)\s+more\b[^.!?]{0,30}?https?://",
    r"\bplans\s+&\s+billing\b|\bquota\s+increase\s+request\b|\badjust\s+(?:the\s+)?limits\b",
    # Credentials and accounts: a person's session, keys or settings.
    r"\b(?:log(?:ging)?|sign(?:ing)?)\s+in\s+again\b|\bre-?authenticate\b|\bre-?login\b",
    r"\b(?:refresh|renew|rotate|update|check|verify)\s+your\s+(?:credentials|mfa|api\s+key"
    r"|token|password|access\s+rights|permissions)\b",
    r"\brecover\s+your\s+password\b|\bplease\s+tell\s+me\s+who\s+you\s+are\b",
    r"\bprovide\s+a\s+valid\s+(?:[\w-]+\s+){0,2}(?:token|key|credentials?)\s+via\b",
    r"\bmake\s+sure\s+(?:that\s+)?you\s+have\s+(?:the\s+)?(?:correct\s+|right\s+)?"
    r"(?:access|permissions?)\b",
    r"\b(?:double-)?check\s+the\s+permissions\b",
    r"\bapi\s+key\s+(?:should\s+be|can\s+be\s+found|is\s+available)\b|\bfind\s+your\s+api\s+key\b",
    r"\b(?:generate|create|obtain|regenerate)\s+(?:a\s+)?new\s+(?:api\s+)?"
    r"(?:key|token|credentials|secret)\b",
    r"\byou\s+can\s+create\s+it\s+here\b",
    r"\benable\s+(?:it|the\s+[\w\s-]{0,30}?api|billing)\s+(?:by|in|at|for)\b",
    r"\b(?:restart|reboot|relaunch)\s+(?:the|your)\s+(?:server|application|app|service"
    r"|computer|machine|ide|editor|terminal|client|daemon|host)\b",
    r"\bask\s+(?:your|an|the)\s+(?:[\w-]+\s+)?(?:administrator|admin|owner)\b",
)
_STEP = re.compile("|".join(f"(?:{p})" for p in _STEP_PATTERNS), re.IGNORECASE | re.MULTILINE)

# What carries the cause: an exception type, an HTTP status, an error code.
_CAUSE = re.compile(
    r"\b[A-Z]\w*(?:Error|Exception|Fault|Failure)\b"
    r"|\b(?:HTTP|status(?:\s+code)?|code|errno)[\s:=/#(]*[0-9]{3}\b"
    r"|\b[1-5][0-9]{2}\s+(?:[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*)\b"
    r"|\b(?:code|error_code|errorCode|reason)\b[\s\"':=]+[\w.-]+"
    r"|(?<![Ss]et )(?<!pdate )(?<!xport )(?<!hange )(?<!efine )(?<!rease )(?<!igure )"
    r"\b[A-Z][A-Z0-9]+(?:_[A-Z0-9]+)+\b(?![^.!?]{0,40}\b(?:set|variable|environment|visit))"
    r"|\b(?:E[A-Z]{3,}|SQLSTATE\s*\w+)\b"
    r"|^\W*[A-Z][a-z]+(?:[A-Z][a-z0-9]+)+\s*:",
)


@dataclass(frozen=True, slots=True)
class Filtered:
    """The text with developer steps omitted, and the sentences that were omitted."""

    text: str
    omitted: tuple[str, ...] = ()


def sentences(text: str) -> list[tuple[int, int]]:
    """The spans of ``text``'s sentences (lines, then ``. ``-separated parts), in order.

    Spans cover the text without the separators, so joining the spans with the
    text between them gives ``text`` back.

    Args:
        text: any text.
    """
    spans = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        if match.start() > start:
            spans.append((start, match.start()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def is_developer_step(sentence: str) -> bool:
    """Whether a sentence asks for a step the agent cannot take and carries no cause.

    Args:
        sentence: one sentence, as :func:`sentences` cuts them.
    """
    return _STEP.search(sentence) is not None and _CAUSE.search(sentence) is None


def omit_developer_steps(text: str) -> Filtered:
    """``text`` with each run of developer-step sentences replaced by :data:`MARKER`.

    The first sentence always stays.  Benign text comes back unchanged, the
    same string.  Of a text longer than twice :data:`WINDOW`, only the first
    and the last :data:`WINDOW` characters are filtered (a note quotes no
    more of an error than its head and tail): the middle stays as it is, so
    the work does not grow with the text.

    Args:
        text: the error text as the tool or service wrote it.

    Returns:
        The filtered text and the omitted sentences, in order.
    """
    if len(text) > 2 * WINDOW:
        head = _omit(text[:WINDOW])
        tail = _omit(text[-WINDOW:])
        if not (head.omitted or tail.omitted):
            return Filtered(text)
        middle = text[WINDOW:-WINDOW]
        return Filtered(head.text + middle + tail.text, head.omitted + tail.omitted)
    return _omit(text)


def _omit(text: str) -> Filtered:
    spans = sentences(text)
    gone = [i for i, (a, b) in enumerate(spans) if i > 0 and is_developer_step(text[a:b])]
    if not gone:
        return Filtered(text)
    out: list[str] = []
    last = 0
    previous = -2
    for i in gone:
        a, b = spans[i]
        if previous == i - 1:
            last = b  # one marker for a run of omitted sentences
        else:
            out.append(text[last:a])
            out.append(MARKER)
            last = b
        previous = i
    out.append(text[last:])
    return Filtered("".join(out), tuple(text[a:b].strip() for a, b in (spans[i] for i in gone)))
