"""The real-world corpus: its shape, its split, and exact verdicts on texts of every family.

The texts are read from ``corpus/realworld`` by id, so each case is a real text
(triggered here or quoted from a public report); the expectations are the kind,
the detection rule, and the evidence (classification rule and span).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import toolmend

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "realworld"
from tools import split  # noqa: E402

ROWS = {row["id"]: row for row in split.rows()}
KEYS = {"id", "family", "group", "origin", "source", "tool", "is_error", "content", "label", "why"}


def test_the_corpus_is_large_varied_and_well_formed() -> None:
    rows = list(split.rows())
    assert len(rows) >= 1500
    assert len(ROWS) == len(rows)
    families = Counter(r["family"] for r in rows)
    assert len(families) >= 12
    for row in rows:
        assert set(row) >= KEYS, row["id"]
        assert row["label"] in split.LABELS, row["id"]
        assert row["source"].startswith(("local:", "https://")), row["id"]
        if row.get("hard"):
            assert row.get("check"), row["id"]


def test_the_split_is_by_origin() -> None:
    rows = list(split.rows())
    table = split.assignment(rows)
    by_group: dict[str, set[str]] = {}
    for (_, group), name in table.items():
        by_group.setdefault(group, set()).add(name)
    assert all(len(names) == 1 for names in by_group.values())
    sizes = Counter(table[r["family"], r["group"]] for r in rows)
    assert set(sizes) == {"train", "dev", "test"}
    assert sizes["test"] >= 300


def test_origins_name_each_rows_file_and_pin() -> None:
    origins = list(split.origins())
    assert [row_id for row_id, _, _ in origins] == [row["id"] for row in split.rows()]
    stems = {row_id: (stem, pinned) for row_id, stem, pinned in origins}
    assert stems["train7/ws-node/ws-503"] == ("train7", "train")
    assert all(pinned == "test" for stem, pinned in stems.values() if stem == "fresh5")
    assert {pinned for stem, pinned in stems.values() if stem == "cli"} == {None}


CASES = [
    # train7: a status after "server response:", messaging and DNS servers' own words.
    ("train7/ws-node/ws-503", "transient", "is_error", "http", "HTTP 503"),
    (
        "train7/nats-py/permissions-violation",
        "unrecoverable",
        "is_error",
        "word",
        "ermissions violation",
    ),
    ("train7/zodb/locked", "transient", "is_error", "word", "ouldn't lock"),
    ("train7/falcon-http/415", "fixable", "is_error", "word", "nsupported Media Type"),
    ("train7/dnspython/servfail", "transient", "is_error", "word", "SERVFAIL"),
    # A Python dict a tool printed is read as an error body; its warnings are not the error.
    (
        "train8/hub-reported/transformers-model-loading",
        "transient",
        "generic",
        "envelope/word",
        "currently loading",
    ),
    ("train8/hub-reported/transformers-unknown-error", "ambiguous", "generic", "none", None),
    # Unflagged starts: grpc's Rendezvous, a first line that is a status, "No such ...".
    (
        "train8/grpc-wild/django-grpc-framework-unavailable",
        "transient",
        "generic",
        "code:grpc",
        "StatusCode.UNAVAILABLE",
    ),
    (
        "train8/llm-reported/pollinations-502-cloudflared",
        "transient",
        "generic",
        "paper",
        "Bad Gateway",
    ),
    (
        "train8/saas-reported/stripe-dotnet-no-such-customer",
        "fixable",
        "generic",
        "word",
        "No such customer",
    ),
    # Parsers and validators of what the call passed (train6).
    ("train6/superstruct/superstruct-enum", "fixable", "is_error", "word", "Expected one of"),
    ("train6/mustache/mustache-unclosed", "fixable", "is_error", "word", "Unclosed"),
    # Go's TLS and client timeout texts.
    (
        "train6/go-net-http/unknown-authority",
        "unrecoverable",
        "is_error",
        "word",
        "signed by unknown authority",
    ),
    (
        "train6/go-net-http/client-timeout",
        "transient",
        "is_error",
        "word",
        "context deadline exceeded",
    ),
    # A status as an exception's first argument: TransportError(429, ...).
    ("train6/opensearch-py/os-rejected", "transient", "is_error", "http", "HTTP 429"),
    # A limit per day decides over the rate limit around it; a quota 'try later' waits.
    (
        "train5/llm-reported/litellm-unrecoverable",
        "unrecoverable",
        "is_error",
        "envelope/word",
        "limit_rpd",
    ),
    ("train5/saas-reported/api-v1-transient", "transient", "is_error", "word", "ry later"),
    # Kubernetes' conflict: fetch the object again and repeat.
    (
        "train5/cloud-reported/kubernetes-transient",
        "transient",
        "is_error",
        "word",
        "object has been modified",
    ),
    # A status in tweepy's "status code = 429".
    ("train5/saas-reported/python-twitter-transient", "transient", "is_error", "http", "HTTP 429"),
    # A name already used stays ambiguous, whatever the 400 around it says.
    (
        "train5/cloud-reported/warehouse-ambiguous",
        "ambiguous",
        "is_error",
        "ambiguous",
        "already been used",
    ),
    # Unflagged error starts: a validator's verdict, an HTTP status with its reason, a
    # typed "Invalid X: " line, a build tool's "[ERROR] ".
    ("train4/cerberus/required", "fixable", "generic", "word", "Validation failed"),
    ("train4/ajv/additional", "fixable", "generic", "paper", "Invalid arguments"),
    (
        "train4/hub-reported/kaggle-cli/too-many",
        "transient",
        "generic",
        "paper",
        "Too Many Requests",
    ),
    (
        "train4/hub-reported/kaggle-cli/participate-denied",
        "unrecoverable",
        "generic",
        "paper",
        "Forbidden",
    ),
    ("train4/luxon/zone", "fixable", "generic", "word", "Invalid "),
    (
        "train3/cloudflare-workers-sdk/routes-auth",
        "unrecoverable",
        "generic",
        "word",
        "uthentication error",
    ),
    ("train4/smtplib-aiosmtpd/unknown-user", "fixable", "is_error", "word", "address rejected"),
    ("train4/express/too-large", "fixable", "is_error", "word", "Payload Too Large"),
    ("train4/numpy/axis", "fixable", "is_error", "word", "out of bounds"),
    # Overrides: a token that fails verification; a context overflow inside a 500.
    (
        "train4/pyjwt/signature",
        "unrecoverable",
        "is_error",
        "override",
        "ignature verification failed",
    ),
    (
        "train4/llm-reported/llama.cpp/context-exceeded-500",
        "fixable",
        "generic",
        "envelope/override",
        "ontext size has been exceeded",
    ),
    # Broad "invalid ..." counts only after a status: a 403 stays the 403's.
    ("saas/gh-bad-user-agent", "unrecoverable", "is_error", "http", "HTTP 403"),
    (
        "cli/curl/body-401-unflagged",
        "unrecoverable",
        "generic",
        "envelope/word",
        "nvalid API token",
    ),
    # An error that lists what it would accept names what to change.
    ("train3/django-orm-postgres/field-error", "fixable", "is_error", "word", "Choices are:"),
    (
        "train3/tortoise-orm-sqlite/bad-filter",
        "fixable",
        "is_error",
        "word",
        "llowed base values",
    ),
    ("train3/gnu-grep/pcre-paren", "fixable", "is_error", "word", "issing closing"),
    ("train3/better-sqlite3/range", "fixable", "is_error", "word", "Too few "),
    # Google's standard PERMISSION_DENIED message; a status after urllib-like "HTTP Error:".
    (
        "train3/firebase-firebase-tools/caller-no-permission",
        "unrecoverable",
        "generic",
        "word",
        "does not have permission",
    ),
    ("train3/firebase-firebase-tools/403-unknown", "unrecoverable", "generic", "http", "HTTP 403"),
    # Cloudflare's authentication error decides over the 400 around it.
    (
        "train3/cloudflare-wrangler-legacy/status-400-auth",
        "unrecoverable",
        "generic",
        "word",
        "uthentication error",
    ),
    # Node's report of an uncaught exception is one error, however long the certificate
    # dump that follows it; Node's own code decides.
    (
        "tls/node-https/wrong-hostname",
        "unrecoverable",
        "is_error",
        "code:node",
        "ERR_TLS_CERT_ALTNAME_INVALID",
    ),
    # A TLS version mismatch decides over the connection error that wraps it.
    (
        "tls/requests/https-to-http-port",
        "fixable",
        "is_error",
        "code:openssl",
        "WRONG_VERSION_NUMBER",
    ),
    # The environment, not the call, has to change.
    (
        "mcp-python/fetch-proxy-bad-scheme",
        "unrecoverable",
        "is_error",
        "word",
        "environment variable",
    ),
    ("clean/gql-syntax-error-eof", "fixable", "envelope", "envelope/word", "Syntax Error:"),
    ("mcp-npm/everycb-cb-url-errorpath", "unrecoverable", "generic", "code:jsonrpc", "-32042"),
    (
        "saas/stripe-oauth-invalid-request-typed",
        "fixable",
        "is_error",
        "code:stripe",
        "InvalidRequestError",
    ),
    ("databases/psql/role-missing", "unrecoverable", "generic", "word", 'FATAL:  role "'),
    ("cli/git/commit-no-identity", "fixable", "is_error", "word", "Please tell me who you are"),
    (
        "agents-reported/crewai-delegate-missing-context",
        "fixable",
        "is_error",
        "paper",
        "validation error",
    ),
    (
        "agents-reported/langchain-slider-field-required",
        "fixable",
        "is_error",
        "word",
        "ValidationError",
    ),
    ("agents-reported/langchainjs-axios-401", "unrecoverable", "is_error", "http", "HTTP 401"),
    (
        "browsers/pw-goto-webkit-could-not-connect",
        "transient",
        "is_error",
        "code:errno",
        "Connection refused",
    ),
    ("browsers/loculus-strict-mode-links", "fixable", "is_error", "word", "strict mode violation"),
    ("browsers/wechaty-nav-timeout-exceeded", "transient", "is_error", "paper", "TimeoutError"),
    (
        "clean/slack-auth-test-err",
        "unrecoverable",
        "generic",
        "envelope/code:slack",
        "invalid_auth",
    ),
    (
        "clean/slack-conversations-members-err",
        "fixable",
        "generic",
        "envelope/code:slack",
        "invalid_cursor",
    ),
    ("clean/gql-unknown-argument-idx", "fixable", "envelope", "envelope/word", "nknown argument"),
    ("clean/aws-logs-get-events-with-error-lines", None, None, None, None),
    ("cli/curl/refused", "transient", "is_error", "word", "Failed to connect to"),
    ("cli/curl/fail-503", "transient", "is_error", "http", "HTTP 503"),
    ("cli/curl/fail-401", "unrecoverable", "is_error", "http", "HTTP 401"),
    ("cloud/s3-access-denied", "unrecoverable", "is_error", "word", "AccessDenied"),
    ("cloud/s3-slowdown", "transient", "is_error", "word", "SlowDown"),
    ("cloud/s3-head-403-nobody", "unrecoverable", "is_error", "paper", "Forbidden"),
    # A published code is a whole token: "ThrottlingException" is read as itself.
    (
        "cloud-reported/aws-js-emr-throttling",
        "transient",
        "is_error",
        "word",
        "ThrottlingException",
    ),
    (
        "cloud-reported/fargate-runtask-throttling-json",
        "transient",
        "is_error",
        "envelope/word",
        "ThrottlingException",
    ),
    (
        "cloud-reported/okta-iam-invalid-client-token",
        "unrecoverable",
        "is_error",
        "word",
        "InvalidClientTokenId",
    ),
    (
        "coding-agents/claude-code-string-not-found-2025",
        "fixable",
        "is_error",
        "word",
        "String to replace not found",
    ),
    ("coding-agents/codex-landlock-eperm", "unrecoverable", "is_error", "word", "PermissionDenied"),
    (
        "coding-agents/codex-bwrap-slave-denied",
        "unrecoverable",
        "is_error",
        "paper",
        "ermission denied",
    ),
    ("databases/sqlite-py/syntax-selec", "fixable", "generic", "code:sqlite", ": syntax error"),
    (
        "databases/sqlite-py/unrecognized-token",
        "fixable",
        "generic",
        "code:sqlite",
        "unrecognized token",
    ),
    ("databases/sqlite-py/readonly-uri", "unrecoverable", "generic", "word", "readonly database"),
    (
        "grpc-wild/weknora-docreader-refused",
        "transient",
        "is_error",
        "code:grpc",
        "code = Unavailable",
    ),
    ("grpc-wild/chord-node-14-unavailable", "transient", "is_error", "paper", "UNAVAILABLE"),
    (
        "grpc-wild/google-ads-dotnet-unavailable",
        "transient",
        "is_error",
        "word",
        "failed to connect to all addresses",
    ),
    (
        "http-wild/envoy-delayed-connect-111",
        "transient",
        "is_error",
        "word",
        "upstream connect error",
    ),
    (
        "http-wild/apache-503-maintenance-page",
        "transient",
        "is_error",
        "paper",
        "Service Unavailable",
    ),
    ("http-wild/axios-502-vertusbot", "transient", "is_error", "http", "HTTP 502"),
    (
        "llm-providers/openai-insufficient-quota",
        "unrecoverable",
        "is_error",
        "word",
        "exceeded your current quota",
    ),
    (
        "llm-providers/openai-insufficient-quota-rawbody",
        "unrecoverable",
        "generic",
        "envelope/word",
        "insufficient_quota",
    ),
    (
        "llm-providers/openai-context-length-exceeded",
        "fixable",
        "is_error",
        "word",
        "maximum context length",
    ),
    (
        "llm-reported/openai-insufficient-quota-chat-langchain",
        "unrecoverable",
        "is_error",
        "word",
        "exceeded your current quota",
    ),
    (
        "llm-reported/anthropic-529-json-overloaded",
        "transient",
        "is_error",
        "word",
        "overloaded_error",
    ),
    ("llm-reported/openai-context-8192-crewai", "fixable", "is_error", "word", "BadRequest"),
    ("mcp-npm/fs-read-etc-passwd", "unrecoverable", "is_error", "paper", "ccess denied"),
    ("mcp-npm/fs-read-empty-path", "fixable", "is_error", "code:errno", "EISDIR"),
    ("mcp-npm/fs-read-head-string", "fixable", "is_error", "paper", "-32602"),
    ("mcp-python/time-tz-pst", "fixable", "is_error", "word", "Invalid "),
    ("mcp-python/time-get-missing-arg", "fixable", "is_error", "paper", "validation error"),
    (
        "mcp-python/git-perm-add-readonly-repo",
        "unrecoverable",
        "is_error",
        "paper",
        "ermission denied",
    ),
    ("mcp-reported/ts-sdk-tool-not-found", "fixable", "is_error", "paper", "-32602"),
    ("mcp-reported/mcphub-429-tpm", "transient", "is_error", "paper", "ate limit"),
    ("mcp-reported/xhs-32001-search-feed", "ambiguous", "is_error", "timeout", "-32001"),
    ("mcp-reported/read-website-eacces-cache", "unrecoverable", "is_error", "paper", "EACCES"),
    ("node/readfile-eisdir-message", "fixable", "is_error", "code:errno", "EISDIR"),
    ("node/enospc-message", "unrecoverable", "is_error", "word", "ENOSPC"),
    ("node/path-undefined-message", "fixable", "is_error", "word", "must be of type"),
    (
        "saas/stripe-card-declined-generic-rawbody",
        "unrecoverable",
        "generic",
        "envelope/code:stripe",
        "card_declined",
    ),
    (
        "saas/stripe-resource-missing-customer-param-typed",
        "fixable",
        "is_error",
        "code:stripe",
        "InvalidRequestError",
    ),
    (
        "saas/stripe-resource-missing-customer-param-rawbody",
        "fixable",
        "generic",
        "envelope/code:openai",
        "invalid_request_error",
    ),
    (
        "saas-reported/slack-destalinator-ratelimited",
        "transient",
        "is_error",
        "code:slack",
        "ratelimited",
    ),
    ("saas-reported/vscode-chat-slack-will-retry", "transient", "is_error", "paper", "ate limit"),
    (
        "saas-reported/stripe-checkout-no-such-customer-5",
        "fixable",
        "is_error",
        "envelope/code:openai",
        "invalid_request_error",
    ),
    (
        "tls/urllib/expired",
        "unrecoverable",
        "is_error",
        "code:openssl",
        "CERTIFICATE_VERIFY_FAILED",
    ),
    (
        "tls/urllib/https-to-http-port",
        "fixable",
        "is_error",
        "code:openssl",
        "WRONG_VERSION_NUMBER",
    ),
    # A Node crash report: its stack frames do not make it a long report.
    (
        "tls/node-https/expired",
        "unrecoverable",
        "is_error",
        "code:openssl",
        "certificate has expired",
    ),
    # PyGithub: a status code before the JSON body.
    ("saas/gh-server-error-502", "transient", "is_error", "http", "HTTP 502"),
    ("saas/gh-otp-required", "unrecoverable", "is_error", "http", "HTTP 401"),
    (
        "saas/gh-rate-limit-ip-legacy",
        "transient",
        "is_error",
        "override",
        "API Rate Limit Exceeded",
    ),
    # A bare 400 outside an HTTP library's wording, and Node's bare "fetch failed", say
    # nothing to act on; fetch's printed cause does.
    ("node/axios-400-message", "ambiguous", "is_error", "none", None),
    ("mcp-python/fetch-status-400-api-v1-search-q-", "ambiguous", "is_error", "none", None),
    ("node/fetch-refused-message", "ambiguous", "is_error", "none", None),
    ("node/fetch-refused-inspect", "transient", "is_error", "paper", "ECONNREFUSED"),
    # pip: no version at all is not a version mismatch.
    ("cli/pip/index-503", "ambiguous", "is_error", "none", None),
    ("cli/pip/no-matching-version", "fixable", "is_error", "word", "(from versions: 0"),
    (
        "databases/psql/hba-reject",
        "unrecoverable",
        "generic",
        "word",
        "pg_hba.conf rejects connection",
    ),
    (
        "databases/psycopg2/terminated",
        "transient",
        "is_error",
        "word",
        "server closed the connection unexpectedly",
    ),
    (
        "node/execfile-maxbuffer-string",
        "fixable",
        "is_error",
        "word",
        "maxBuffer length exceeded",
    ),
    ("cli/git/revert-merge-no-m", "fixable", "is_error", "word", "no -m option was given"),
    ("cloud/rds-not-found", "fixable", "is_error", "code:aws", "DBInstanceNotFound"),
    (
        "cloud/azure-resource-group-not-found-rawbody",
        "fixable",
        "generic",
        "envelope/code:azure",
        "ResourceGroupNotFound",
    ),
    # train9: a wrong value, a name that is not there, a module missing by its path.
    ("train9/bcrypt/password-too-long", "fixable", "is_error", "value", "cannot be longer than"),
    (
        "train9/mixpanel-python/track-token-missing",
        "fixable",
        "is_error",
        "value",
        "missing or empty",
    ),
    ("train9/sequelize-sqlite/bad-dialect", "fixable", "is_error", "word", "not supported"),
    (
        "train9/sqlfluff-cli/unknown-dialect",
        "fixable",
        "is_error",
        "missing",
        "Unknown dialect 'postgre'",
    ),
    (
        "train9/chroma-mcp/count-missing",
        "fixable",
        "is_error",
        "missing",
        "Collection [nope] does not exist",
    ),
    ("train9/webpack-cli/module-not-found", "fixable", "is_error", "word", "Can't resolve '"),
    ("train9/webpack-cli/entry-missing", "ambiguous", "is_error", "ambiguous", "Can't resolve './"),
    (
        "train9/ts-node/script-missing",
        "ambiguous",
        "is_error",
        "ambiguous",
        "Cannot find module './",
    ),
    ("cli/npm/node-cannot-find-module", "fixable", "is_error", "word", "Cannot find module"),
    # Unflagged texts that start as errors do: "Error adding to memory: ", a status with
    # its gRPC code, a client's "Failed after 3 attempts. Last error: ", an AWS
    # authorisation message, "Security violation: ".
    ("train9/github:mem0ai/mem0/add-memory-timeout", "transient", "generic", "paper", "timed out"),
    (
        "train9/github:sinas-platform/sinas/resource-exhausted-429",
        "transient",
        "generic",
        "paper",
        "RESOURCE_EXHAUSTED",
    ),
    (
        "train9/github:stackblitz/bolt.new/org-itpm-limit",
        "transient",
        "generic",
        "paper",
        "ate limit",
    ),
    (
        "train9/github:tinovyatkin/amazon-bedrock-copilot-chat/scp-explicit-deny",
        "unrecoverable",
        "generic",
        "paper",
        "ot authorized to",
    ),
    ("train9/cli-mcp-server/flag-not-allowed", "ambiguous", "generic", "none", None),
    # A file or path named as missing is ENOENT in words, whatever else the text says;
    # so is a local socket file that is not there.
    (
        "fresh3/click/path-missing",
        "ambiguous",
        "is_error",
        "ambiguous",
        "File 'tasks.json' does not exist",
    ),
    (
        "train7/svnadmin-svnlook/svnlook-path",
        "ambiguous",
        "is_error",
        "ambiguous",
        "Path '/trunk/README' does not exist",
    ),
    (
        "train8/agents-reported/skillberry-store-docker-socket",
        "ambiguous",
        "is_error",
        "ambiguous",
        "FileNotFoundError(2, 'No such file or directory')",
    ),
    (
        "node/execfile-kubectl-refused-message",
        "ambiguous",
        "is_error",
        "ambiguous",
        "couldn't get current server API group list",
    ),
    # train10: passwords, locks, security policies, lists of accepted values, boto's
    # "An error occurred (X)" as an error start, a browser driver for another version.
    ("train10/restic/wrong-pass", "unrecoverable", "is_error", "word", "wrong password"),
    ("train10/restic/locked", "transient", "is_error", "word", "already locked by"),
    ("train10/graphviz-dot/bad-layout", "fixable", "is_error", "word", "Use one of: "),
    (
        "train10/imagemagick/policy",
        "unrecoverable",
        "is_error",
        "word",
        "not allowed by the security policy",
    ),
    (
        "train10/github:o2Labs/sentry-formation/putobject-accessdenied",
        "unrecoverable",
        "generic",
        "word",
        "AccessDenied",
    ),
    (
        "train10/github:shauryauppal/PyWhatsapp/chromedriver-version",
        "unrecoverable",
        "generic",
        "word",
        "This version of ChromeDriver only supports",
    ),
    # An envelope's status decides over its message's "Invalid X".
    ("fresh3/dashscope/bad-key", "unrecoverable", "envelope", "envelope/http", "HTTP 401"),
    # A status printed with a library's own "Invalid X" decides over it.
    ("train9/fastapi-testclient/unauthorized", "unrecoverable", "is_error", "http", "HTTP 401"),
    # A 405 says too little: the caller's wrong method, or an operation never offered.
    ("train9/flask-testclient/method-not-allowed", "ambiguous", "is_error", "none", None),
    # train11-13 and the earlier training batches: unsupported options and formats, decoders,
    # template engines, refused credentials, title-case limits, missing scopes; a missing
    # input file or a file that is not a PDF stays ambiguous.
    ("train10/orjson/trailing", "fixable", "is_error", "word", "DecodeError"),
    ("train10/nunjucks/syntax", "fixable", "is_error", "word", "Template render error"),
    ("train10/cheerio/unknown-pseudo", "fixable", "is_error", "word", "nknown pseudo"),
    ("train11/rsvg-convert/malformed-svg", "fixable", "is_error", "word", "XML parse error"),
    (
        "train11/xsltproc/missing-xml",
        "ambiguous",
        "is_error",
        "ambiguous",
        "failed to load external entity",
    ),
    ("train11/tomli-w/none-value", "fixable", "is_error", "word", "serializable"),
    ("train11/xlrd/xlsx-unsupported", "fixable", "is_error", "word", "not supported"),
    ("train11/xlrd/wrong-sheet", "fixable", "is_error", "word", "No sheet named"),
    ("train11/bcryptjs/undefined-password", "fixable", "is_error", "word", "llegal argument"),
    ("train11/jsonwebtoken/malformed", "fixable", "is_error", "word", "jwt malformed"),
    ("train11/terser/bad-option", "fixable", "is_error", "word", "not a supported"),
    ("train11/liquidjs/strict-vars", "fixable", "is_error", "word", "ndefined variable"),
    (
        "train11/f4ww4z-mcp-mysql-server/denied-write",
        "unrecoverable",
        "is_error",
        "word",
        "command denied to user",
    ),
    (
        "train11/github:daytonaio/daytona/api-key-not-found",
        "unrecoverable",
        "generic",
        "word",
        "API key not found",
    ),
    (
        "train11/github:awslabs/agent-evaluation/invoke-agent-throttling",
        "transient",
        "generic",
        "word",
        "throttlingException",
    ),
    (
        "train12/opencv-python-headless/imwrite-ext",
        "fixable",
        "is_error",
        "word",
        "could not find a writer",
    ),
    (
        "train12/shapely/geojson-type",
        "fixable",
        "is_error",
        "missing",
        "Unknown geometry type: 'polygone'",
    ),
    ("train12/imageio/text-file", "fixable", "is_error", "word", "Could not find a backend"),
    ("train12/soundfile/not-audio", "fixable", "is_error", "word", "ormat not recognised"),
    (
        "train12/soundfile/bad-subtype",
        "fixable",
        "is_error",
        "missing",
        "Unknown subtype: 'PCM_48'",
    ),
    ("train12/jimp/write-ext", "fixable", "is_error", "word", "nsupported MIME type"),
    ("train12/jimp/crop-out", "fixable", "is_error", "word", "is out of range. It must be"),
    ("train12/pdf-lib/load-not-pdf", "ambiguous", "is_error", "ambiguous", "No PDF header"),
    ("train12/python-freshdesk/rate-limited", "transient", "is_error", "word", "ate Limit"),
    ("train12/python-freshdesk/server-502", "transient", "is_error", "http", "HTTP 502"),
    (
        "train12/pipedrive-python-lib/payment-required",
        "unrecoverable",
        "is_error",
        "word",
        "trial expired",
    ),
    (
        "train12/calendly-rest/webhook-upgrade",
        "unrecoverable",
        "is_error",
        "word",
        "ermission Denied",
    ),
    (
        "train12/mcp-z-mcp-pdf/image-not-pdf",
        "ambiguous",
        "is_error",
        "ambiguous",
        "Invalid PDF structure",
    ),
    (
        "train12/github:adrianhajdin/banking/account-get-guest",
        "unrecoverable",
        "generic",
        "word",
        "missing scope",
    ),
    ("train13/php-cli/arg-count", "fixable", "is_error", "word", "ArgumentCountError"),
    ("train13/ruby/type-coerce", "fixable", "is_error", "word", "can't be coerced into"),
    ("train13/erlang-otp/econnrefused", "transient", "is_error", "word", "econnrefused"),
    (
        "train13/mqtt-js/bad-password",
        "unrecoverable",
        "is_error",
        "word",
        "Bad username or password",
    ),
    ("train13/ldapjs/bind-bad-creds", "unrecoverable", "is_error", "word", "nvalid Credentials"),
    ("train13/ldapjs/search-bad-filter", "fixable", "is_error", "word", "nbalanced parenthes"),
    ("train13/ldapjs/add-insufficient", "unrecoverable", "is_error", "word", "nsufficient Access"),
    (
        "train13/ssh2/auth-failed",
        "unrecoverable",
        "is_error",
        "word",
        "authentication methods failed",
    ),
    ("train13/ssh2/host-verify", "unrecoverable", "is_error", "word", "Host denied"),
    (
        "train13/smbprotocol/bad-password",
        "unrecoverable",
        "is_error",
        "word",
        "STATUS_LOGON_FAILURE",
    ),
    (
        "train13/smbprotocol/write-readonly-share",
        "unrecoverable",
        "is_error",
        "word",
        "STATUS_ACCESS_DENIED",
    ),
    ("train13/saas-reported/guzzle-curl28-0ms", "transient", "generic", "paper", "timed out"),
    ("train13/saas-reported/guzzle-curl28-connect", "transient", "generic", "paper", "timed out"),
    # The AWS SDK for JavaScript v3's error as it serialises: name, $fault, $metadata.
    (
        "train8/cloud-reported/positron-throttling-429",
        "transient",
        "envelope",
        "envelope/word",
        "ThrottlingException",
    ),
    # train14: a GraphQL error body after a success status line (its retry field is a
    # retry hint), validators' messages, compilers' syntax errors, PostGIS's SRIDs.
    (
        "train14/monday-graphql/undefined-field",
        "fixable",
        "envelope",
        "envelope/word",
        "Cannot query field",
    ),
    (
        "train14/monday-graphql/complexity-budget",
        "transient",
        "envelope",
        "envelope/retry-hint",
        "retry hint",
    ),
    ("train14/postgis-psql/mixed-srid", "fixable", "is_error", "word", "SRID"),
    ("train14/ocaml/syntax-error", "fixable", "is_error", "word", "Syntax error"),
    ("train14/dacite/missing-field", "fixable", "is_error", "word", "missing value for field"),
    (
        "train14/class-validator/date-string-raw",
        "fixable",
        "is_error",
        "word",
        "has failed the validation",
    ),
    ("train14/arktype/bad-email", "fixable", "is_error", "word", "must be an email"),
    ("train14/pycurl/unsupported-protocol", "fixable", "is_error", "word", "not supported"),
    # train16-17: expired tokens, OAuth's slow_down, OpenSSL's reasons, a list of valid
    # values, Let's Encrypt's weekly limit, axios's status line, pkg-config's missing library.
    ("train16/pyopenssl/pem-no-start-line", "fixable", "is_error", "word", "no start line"),
    ("train16/jwcrypto/jwt-expired", "unrecoverable", "is_error", "word", "JWTExpired"),
    (
        "train16/itsdangerous/signature-expired",
        "unrecoverable",
        "is_error",
        "word",
        "SignatureExpired",
    ),
    ("train16/authlib/slow-down", "transient", "is_error", "word", "slow_down"),
    (
        "train16/node-forge/unsupported-cipher",
        "fixable",
        "is_error",
        "word",
        "nsupported algorithm",
    ),
    ("train16/otplib/unknown-strategy", "fixable", "is_error", "value", "Valid strategies are"),
    ("train16/coolify-mcp/too-many-attempts", "transient", "generic", "word", "Too Many Attempts"),
    (
        "train16/mcp-searxng/private-url-blocked",
        "unrecoverable",
        "is_error",
        "word",
        "blocked by security policy",
    ),
    (
        "train16/cloud-reported/certbot-rate-limited-exact-set",
        "unrecoverable",
        "generic",
        "override",
        "oo many certificates already issued",
    ),
    (
        "train16/agents-reported/activepieces-request-failed-401",
        "unrecoverable",
        "generic",
        "http",
        "HTTP 401",
    ),
    (
        "train17/pkg-config/not-found",
        "ambiguous",
        "is_error",
        "ambiguous",
        "was not found in the pkg-config search path",
    ),
    (
        "train17/scaleway-api/transient-state",
        "transient",
        "is_error",
        "word",
        "in a transient state",
    ),
    ("train6/pymemcache/memcache-key", "fixable", "is_error", "word", "Key contains whitespace"),
    # LDAP result codes as libldap prints them, and train15's words.
    (
        "train15/openldap-ldapmodify/insufficient-access",
        "unrecoverable",
        "is_error",
        "code:ldap",
        "Insufficient access (50)",
    ),
    (
        "train15/openldap-ldapsearch/cannot-contact",
        "transient",
        "is_error",
        "code:ldap",
        "Can't contact LDAP server (-1)",
    ),
    (
        "train15/openldap-ldapmodify/objectclass-violation",
        "fixable",
        "is_error",
        "code:ldap",
        "Object class violation (65)",
    ),
    (
        "train15/openldap-ldapsearch/bad-filter",
        "fixable",
        "is_error",
        "code:ldap",
        "Bad search filter (-7)",
    ),
    (
        "train15/asyncssh/host-key-not-trusted",
        "unrecoverable",
        "is_error",
        "word",
        "ost key is not trusted",
    ),
    ("train15/aio-pika/inequivalent-arg", "fixable", "is_error", "word", "inequivalent arg"),
    (
        "train15/smbclient/connection-refused",
        "transient",
        "is_error",
        "word",
        "STATUS_CONNECTION_REFUSED",
    ),
    (
        "train15/httplib2/relative-uri",
        "fixable",
        "is_error",
        "word",
        "Only absolute URIs are allowed",
    ),
    (
        "train12/shapely/linestring-1pt",
        "fixable",
        "is_error",
        "word",
        "IllegalArgumentException",
    ),
    (
        "train5/hub-reported/hub-feedback-ambiguous",
        "ambiguous",
        "is_error",
        "ambiguous",
        "pull rate limit",
    ),
    ("train6/handlebars/hbs-helper", "fixable", "is_error", "word", "Missing helper"),
    ("train6/xmllint/xmllint-dtd", "fixable", "is_error", "word", "does not validate"),
    ("train8/saas-reported/jira-cli-401-local", "unrecoverable", "is_error", "http", "HTTP 401"),
    (
        "train9/ruff-cli/unknown-selector",
        "fixable",
        "is_error",
        "missing",
        "Unknown rule selector `XYZ1`",
    ),
]


def verdict(row: dict[str, Any]) -> toolmend.Verdict:
    flag = row["is_error"] if row["is_error"] is True else None
    return toolmend.classify_result(row["content"], is_error=flag, tool=row["tool"])


@pytest.mark.parametrize(
    ("case", "kind", "rule", "basis", "span"), CASES, ids=[c[0] for c in CASES]
)
def test_real_text_verdict(
    case: str, kind: str | None, rule: str, basis: str, span: str | None
) -> None:
    found = verdict(ROWS[case])
    assert (found.kind.value if found.kind else None, found.rule) == (kind, rule)
    assert (found.basis, found.reason) == (basis, span)


@pytest.mark.parametrize(
    "case",
    sorted(
        r["id"]
        for r in ROWS.values()
        if r["label"] == "clean"
        and any(s in r["content"] for s in ('"error": null', '"errors": []', '"ok": true'))
    ),
)
def test_clean_envelopes_are_not_failures(case: str) -> None:
    assert verdict(ROWS[case]).failed is False


def test_a_table_of_http_statuses_is_not_a_failure() -> None:
    assert verdict(ROWS["clean/doc-httpstatus-table"]).failed is False
