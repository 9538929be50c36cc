"""Word lists and matchers that decide a failure's kind.

``COMMON`` and ``WIDE`` are the paper's Appendix A, verbatim: words are
case-sensitive substrings, and some omit their first letter so that both
capitalisations match.  ``EXTRA`` widens coverage to texts the paper's rules
missed (Python exception names, cloud SDK codes, database drivers); every entry
names a condition whose next action is not in doubt, because wrong guidance
costs more than none.  ``OWN_TIMEOUT`` are a command's own timeouts: a repeat
may time out again, so they make the whole result ambiguous; so do the
``STAYS_AMBIGUOUS`` texts (a name already taken, a payload too big).

Matching runs on every failed tool message, so each list compiles to one
regular expression that anchors each word at one of its rare characters:
Python's ``re`` then skips every position that holds no anchor character,
instead of trying a hundred alternatives at each one.  The result is exactly
that of testing every word as a substring.  HTTP statuses and retry hints,
which count only when no word decides, are found the same way: by a cheap
search for the rare part first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from .._types import Kind
from ._codes import code_kinds

__all__ = [
    "CODES",
    "COMMON",
    "COMMON_MATCHER",
    "DEMOTED",
    "EXTRA",
    "HTTP_KIND",
    "OVERRIDE",
    "OWN_TIMEOUT",
    "STAYS_AMBIGUOUS",
    "VETO",
    "WEAK",
    "WEAK_MATCHER",
    "WHOLE_CODES",
    "WIDE",
    "WIDE_MATCHER",
    "WIDE_TABLE",
    "WORDING",
    "Matcher",
    "http_status",
    "retry_hint",
]

U, T, F, A = Kind.UNRECOVERABLE, Kind.TRANSIENT, Kind.FIXABLE, Kind.AMBIGUOUS

OWN_TIMEOUT: tuple[str, ...] = (
    "ommand timed out", "ommand timeout", "xecution timed out",
    # Browser automation's own waits: the element or page may never come.
    "ms exceeded.", "ms exceeded\n", "avigation timeout of", "waiting for locator(",
    "waiting for selector",
    # An MCP server process that closed its connection: it crashed or never started.
    "-32000: Connection closed",
    # A client's own request timeout (MCP -32001; the Python SDK 1.x's own wording):
    # repeating a call that may have run is not known to be safe, and the tool's
    # effect is not in the text.
    "-32001", "Request 'tools/call' timed out", "Timed out while waiting for response to",
)  # fmt: skip

# Neither a retry nor another argument: the thing exists (or the name is taken), the
# payload is too big, the server answered with something that is not the expected
# JSON, or a module is missing by its path.  Like a command's own timeout, each makes
# the whole result ambiguous.
STAYS_AMBIGUOUS: tuple[str, ...] = (
    "already exists", "larger than max", "update or delete on table", "is not valid JSON",
    "Unexpected end of JSON input", "already been used",
    # A module named by its path is a missing file (wrong path, or not built yet), as
    # ENOENT is; a module named by its package is a name to correct.
    "Cannot find module '/", "Cannot find module './", "Cannot find module '../",
    "Can't resolve '/", "Can't resolve './", "Can't resolve '../",
    # A connection to a local socket file that is not there: no daemon, not a network
    # failure to wait out.
    "FileNotFoundError(2, 'No such file or directory')",
    # kubectl with no cluster configured dials its default, localhost:8080: nothing to
    # wait out, and nothing the call can change.
    "couldn't get current server API group list",
    # libxml2's missing input file (xsltproc, xmllint) and a template engine's missing
    # template file: ENOENT in their own words.
    "failed to load external entity", "template not found", "TemplateNotFound",
    # A library the build needs is not installed: a missing file, not an argument.
    "was not found in the pkg-config search path",
    # A file that is not what its name says: corrupt, or the wrong file.
    "Invalid PDF structure", "No PDF header",
    # JSON expected and none there at all (an empty or HTML body): what the server sent,
    # as Node's "is not valid JSON" above.
    "Expecting value: line 1 column 1 (char 0)",
    # Docker Hub's pull limit lasts hours and lifts for a signed-in user: neither a
    # wait nor another argument.
    "pull rate limit",
)  # fmt: skip
VETO: tuple[str, ...] = OWN_TIMEOUT + STAYS_AMBIGUOUS

COMMON: Mapping[str, Kind] = {
    **dict.fromkeys(
        ["EACCES", "EPERM", "ermission denied", "Access is denied", "ead-only",
         "Unable to write", "Forbidden"], U),
    **dict.fromkeys(
        ["ECONNRESET", "ECONNREFUSED", "ETIMEDOUT", "EAI_AGAIN", "Too Many Requests",
         "ate limit", "Service Unavailable", "Gateway Timeout", "emporarily unavailable"], T),
    **dict.fromkeys(
        ["must not be empty", "cannot be empty", "has not been read",
         "No replacement performed", "Invalid insert_line", "was omitted", "did not match",
         "not unique", "verification failed", "Invalid arguments", "Invalid parameters"], F),
}  # fmt: skip

WIDE: Mapping[str, Kind] = {
    **dict.fromkeys(
        ["Unauthorized", "PERMISSION_DENIED", "UNAUTHENTICATED", "ccess denied",
         "ot authorized to", "ncorrect API key", "nvalid API key"], U),
    **dict.fromkeys(
        ["timed out", "TimeoutError", "ReadTimeout", "ConnectTimeout", "WriteTimeout",
         "PoolTimeout", "socket.timeout", "Request Timeout", "DEADLINE_EXCEEDED",
         "UNAVAILABLE", "RESOURCE_EXHAUSTED", "onnection reset", "onnection refused",
         "onnection aborted", "Bad Gateway", "Internal Server Error", "socket hang up",
         "fetch failed", "Max retries exceeded"], T),
    **dict.fromkeys(
        ["unexpected keyword argument", "required positional argument",
         "positional arguments but", "nvalid params", "INVALID_ARGUMENT", "Bad Request",
         "Unprocessable", "validation error", "is a required property", "is not of type",
         "dditional properties are not allowed", "is not a valid tool", "nknown tool",
         "ethod not found", "-32601", "-32602"], F),
}  # fmt: skip

EXTRA: Mapping[str, Kind] = {
    # Python and SDK exception names, cloud SDK and API error codes, errno texts.
    **dict.fromkeys(
        ["PermissionError", "PermissionDenied", "AccessDenied", "UnauthorizedOperation",
         "InvalidClientTokenId", "ExpiredToken", "SignatureDoesNotMatch", "AuthFailure",
         "AuthenticationError", "AuthenticationFailed", "AuthorizationFailed",
         "Unauthenticated", "authentication_error", "permission_error", "invalid_api_key",
         "insufficient_quota", "exceeded your current quota", "credit balance is too low",
         "Payment Required", "readonly database", "EROFS", "ENOSPC",
         "No space left on device", "Disk quota exceeded", "Operation not permitted"], U),
    **dict.fromkeys(
        ["ConnectionError", "ConnectionResetError", "ConnectionRefusedError",
         "ConnectionAbortedError", "BrokenPipeError", "RemoteDisconnected", "Connection error.",
         "Server disconnected", "ECONNABORTED", "EPIPE", "ENETUNREACH",
         "Network is unreachable", "EAGAIN", "emporary failure in name resolution",
         "RateLimitError", "rate_limit_error", "rate_limit_exceeded", "TooManyRequests",
         "ThrottlingException", "RequestLimitExceeded", "ProvisionedThroughputExceeded",
         "SlowDown", "InternalServerError", "ServiceUnavailable", "GatewayTimeout",
         "DeadlineExceeded", "ResourceExhausted", "overloaded_error", "Overloaded",
         "ry again later", "database is locked", "database table is locked",
         "deadlock detected", "Deadlock found", "Lock wait timeout exceeded",
         "could not serialize access", "too many clients already", "Too many connections"], T),
    **dict.fromkeys(
        ["positional argument but", "required keyword-only argument",
         "got multiple values for argument", "ToolInvocationError", "ValidationError",
         "Failed validating '", "ValidationException",
         "InvalidArgument", "InvalidParameter", "MissingParameter", "BadRequest",
         "UnprocessableEntity", "context_length_exceeded", "IsADirectoryError",
         "Is a directory", "NotADirectoryError", "Not a directory", "no such table",
         "no such column", "syntax error"], F),
}  # fmt: skip

# Wording of real-world errors beyond the paper's lists (the real-world corpus's train
# and dev splits): each names a condition whose next action is not in doubt.
WORDING: Mapping[str, Kind] = {
    **dict.fromkeys(
        ["not a public address", "not in the allowed domains", "nvalid credentials",
         "nvalid token", "nvalid_token", "nvalid_client",
         "nvalid access token", "nvalid authentication", "uthentication required",
         "uthentication failed", "equires authentication", "ogin required", "not logged in",
         "need auth", "ncorrect or missing password", "nsufficient permission",
         "nsufficient privilege", "don't have permission",
         "ccount suspended", "has been suspended", "ccount is disabled",
         "Cannot connect to the Docker daemon", "Unsupported engine", "not permitted",
         "is unverified", "Trial accounts", "nvalid API Key", "nsufficient funds",
         "could not read Username", "card was declined", "xpired API Key", "live mode key was used",
         "login attempt", "dubious ownership", "is forbidden: User", "rejected by user",
         "blocked by policy", "credentials cannot be refreshed", "20003: Authenticate",
         "requires an index", "no matching index",
         "autonomous fetching of this page is not allowed",
         "could not read Password", "terminal prompts disabled", "haven't granted",
         "Output validation error", "nvalid session", "nvalid Session", "xpired session",
         "INVALID_SESSION_ID", "ession expired", "ession has expired", "token has expired",
         "oken is expired", "oken expired", "pg_hba.conf rejects connection",
         "rejected SSL upgrade", "but SSL was required",
         # Configuration the call cannot change: the process's environment, its
         # credentials header, a server's confinement.
         "environment variable", "Authorization header", "couldn't find your API Key",
         "Command is not allowed", "is outside the allowed", "User rejected", "Bad credentials",
         "is not allowed for this repository", "refusing to update checked out branch",
         'FATAL:  role "', "incorrect or expired", "owned by an organization",
         "Only organization repositories",
         # Cloudflare's code 10000 and Google's standard PERMISSION_DENIED message.
         "uthentication error", "does not have permission", "nvalid API token",
         "ot enough privileges", "has expired", "must be authenticated", "Not logged in",
         "Access Denied", "ogin Required", "uthentication information",
         # A limit per day is the account's for today: waiting a minute does not help.
         "aily limit", "aily Limit", "aily rate limit", "limit_rpd",
         "nable to authenticate", "nvalid Token", "PI key is invalid", "ath traversal",
         "private address",
         # Go's crypto/x509: the certificate does not verify.
         "signed by unknown authority", "IP SANs", "not configured", "usage limit",
         "uthorization failed", "Not authorized", "ot authorised", "uthorization Violation",
         "ermissions violation"], U),
    **dict.fromkeys(
        ["network timeout", "Couldn't connect to server", "Failed to connect to",
         "Empty reply from server", "overloaded", "upstream connect error",
         "reset before headers", "no healthy upstream", "Gateway Time-out",
         "emporarily", "currently unavailable", "is unavailable", "Lock wait timeout",
         "Connect call failed", "connection attempts failed", "due to a connection issue",
         "aborted due to timeout", "timeout of ", "failed to connect to all addresses",
         "due to lock timeout",
         "stale element reference", "Ratelimit", "atelimit exceeded", "calls per second",
         "Reduce request rates",
         "Another git process seems to be running", "ateway time-out",
         "A timeout occurred", "速率限制", "server closed the connection unexpectedly",
         "other side closed", "Timed out", "ry later",
         # Kubernetes' optimistic-concurrency conflict: read the object again and retry.
         "object has been modified",
         # Go's net/http and context: the remote did not answer in time.
         "context deadline exceeded", "Client.Timeout exceeded", "nable to connect",
         "oo many requests", "currently loading", "no servers available", "ouldn't lock",
         "SERVFAIL", "oo many connections"], T),
    **dict.fromkeys(
        ["Invalid ", "nknown option", "nknown flag", "nknown command",
         "nknown argument", "nknown field", "nknown parameter", "nknown column", "nknown property",
         "nknown key", "nknown model", "nknown revision", "nknown type", "nknown value",
         "nknown action", "nknown method", "nknown format", "nknown variable", "nknown attribute",
         "nrecognized", "nexpected argument",
         "not recognized as", "No rule to make target", "did not resolve to an object",
         "did not match any file", "not a valid", "is not valid",
         "must be one of", "must be provided", "must not be", "should be a", "is required",
         "are required", "required field", "Field required", "issing required", "is missing",
         "Missing script", "issing argument", "issing parameter", "No matching version",
         "Cannot find module", "ModuleNotFoundError", "No module named", "SyntaxError",
         "NameError", "IndentationError", "too long", 'relation "', 'column "',
         "bad revision", "unknown revision",
         "is ambiguous", "ambiguous argument", "nt out of range", "integer out of range",
         "current transaction is aborted",
         "occurrences found", "could not find the string", "failed to match", "ultiple matches",
         "must read the file", "String to replace not found", "not found in file",
         "No edits made", "command not found", "strict mode violation", "Unable to locate element",
         "malformed object name", "has no upstream branch",
         "missing separator", "undefined reference to", "Cannot index", "Unknown command",
         "nknown encoding", "is unknown", "must be of type", "cannot have body",
         "has more than one primary key", "duplicate column name", "may not be modified",
         "values were supplied", "Cannot add a", "only use this tool with a correct input",
         "is invalid", "nvalid format", "nsupported protocol",
         "nsupported URL", "not supported or disabled", "is outside the repository",
         "No changes staged", "No item found with", "HEAD is detached", "didn't exist",
         "! [rejected]", "CONFLICT (", "Not found in archive", "unterminated quoted string",
         "more than one row returned", "No function matches", "argument for this query",
         "nvalid input", "cannot store", "cannot modify", "does not match any PRIMARY KEY",
         "reserved for internal use", "nknown datatype", "ERESOLVE", "EUSAGE",
         "valid parameters", "exact chunk", "Cannot query field", "Cannot convert",
         "Could not resolve to a",
         # pip found the package but no version fits; "(from versions: none)" says
         # nothing was found at all: a wrong name, or an index that did not answer.
         *(f"(from versions: {digit}" for digit in "0123456789"),
         "Needed a single revision", "is not a git command",
         "invalid reference", "patch does not apply", "src refspec", "does not contain a section",
         "maximum context length", "Incorrect number of bindings", "supply a value for binding",
         "Error binding parameter", "malformed JSON", "matches of the string to replace",
         "String to replace was not found", "must be read first", "don't match anything",
         "no such option", "try pulling it first", "was not found. To download it", "The model `",
         "No such customer", "No such price", "No such product", "No such plan",
         "No such subscription", "No such invoice", "No such charge", "No such token",
         "Keys for idempotent requests can only be used", "statements are allowed",
         "are exactly the same", "did not conform to the edit format",
         "' does not exist. Did you mean ", "' does not exist. Available tools: ",
         "' does not exist. Call one of the tools you were given.",
         "' was not run: invalid arguments", "' was not run: its arguments ",
         "ERR_INVALID_ARG_TYPE", "ERR_INVALID_ARG_VALUE", "The argument '",
         "maxContentLength size of", "maxBuffer length exceeded", "Cannot specify both",
         "Parse error near line",
         "because you have unmerged files", "no -m option was given",
         "You are not currently on a branch", "need to specify how to reconcile",
         "fatal: bad source",
         # GraphQL's own messages, Jira's field errors, git, pip,
         # curl and Node argument checks: each names what to change in the call.
         "Syntax Error:", "doesn't exist on type", "does not appear to be a valid",
         "not on the appropriate screen", "bad/illegal format", "Required input '",
         "does not appear to be a git repository", "Please tell me who you are",
         "nothing added to commit but untracked files present",
         "externally-managed-environment", "Port should be >= 0",
         "don't match the file content", "too large to convert to SQLite INTEGER",
         "nknown scheme", "Request validation failed", "Branch not found",
         # The error lists what would have been accepted, or says what it expected.
         "Choices are:", "llowed base values", "alid operators are", "alid values are",
         "alid options are", "Did you mean", "did you mean", "erhaps you meant",
         "issing closing", "Too few ", "an't parse", "annot parse",
         "expected to be in the format", "ultiple objects returned",
         # A value, a name or a format the call chose that the program does not accept.
         "ormat not recognized", "nsupported format", "out of bounds",
         "ould not convert", "no such command", "no such variable", " not defined",
         "nknown function", "nknown subcommand", "nknown device", "' must be ",
         "has to be specified", "Payload Too Large", "hunk FAILED", "ailed to parse",
         "nsupported URI", "but got", "annot serialize", "an not serialize",
         "not JSON serializable", "Validation failed", "uplicated mapping key",
         "bad indentation", "size exceeds", "address rejected", "alidation failed for",
         "ould not find a field", "issing field", "nable to parse", "llowed options",
         # Parsers and validators of what the call passed: the input is malformed.
         "ParseError", "ParserError", "ParseException", "nexpected character", "but received",
         "Unclosed", "unclosed", "Not Closed", "ag mismatch", "ismatched tag", "Expected one of",
         "ndefined symbol",
         "ndefined function", "never defined", "issing key", "Wrong key", "key not provided",
         "keys not allowed", "argument missing", "nknown unit", "nknown string format",
         "nknown locale", "nrecognised", "annot contain", "declared but not used",
         "no package called", "attempt to index", "does not look like a TLS handshake",
         "out of range for", "nknown index", "nsupported tool", "nsupported Media Type",
         "No such revision", "isn't a valid", "must be an integer", "Command not found",
         "nknown environment", "nknown configuration", "ot a number",
         "must not contain", "aximum payload"], F),
    # Published messages: Google's API-key check (with a 400 INVALID_ARGUMENT around it),
    # jsonwebtoken's expiry, OpenAI's server-side error, jsonschema's enum, TypeScript's
    # TS2345.
    "API key not valid": U, "valid API key": U, "valid api key": U, "valid API Key": U,
    "jwt expired": U, "had an error while processing your request": T,
    "is not one of [": F, "is not assignable to parameter of type": F,
    # Bundlers' and TypeScript's own errors about the code they were given.
    "is not exported by": F, "is not assignable to type": F, "Can't resolve '": F,
    # From train10: a driver for another browser version, a wrong or missing password,
    # a security policy, a repository locked by another process, a list of what the
    # call may use.
    "This version of ChromeDriver only supports": U, "wrong password": U,
    "ncorrect password": U, "not allowed by the security policy": U,
    "already locked by": T, "acquire the lock": T, "Use one of: ": F,
    # From train11: options, formats and values a library does not accept, JSON the
    # caller wrote by hand, a template's unknown variable, MySQL's per-command grants,
    # a missing API key, AWS's lower-case throttling code.
    "not supported": F, "not a supported": F, "serializable": F, "llegal argument": F,
    "jwt malformed": F, "Expecting property name enclosed in double quotes": F,
    "railing comma": F, "No sheet named": F, "ndefined variable": F, "XML parse error": F,
    "command denied to user": U, "API key not found": U, "throttlingException": T,
    # Decoders of what the call passed (TOML, JSON, Hjson), template engines' own errors,
    # a CSS selector's unknown pseudo-class, a character the format does not allow, a
    # document that fails its DTD.
    "DecodeError": F, "Template render error": F, "Missing helper": F, "filter not found": F,
    "nknown pseudo": F, "llegal character": F, "does not validate": F,
    # From train12: a limit in title case, a grant the token lacks, an account that may
    # not use the API, a file type no reader or writer handles, Node's range check.
    "ate Limit": T, "missing scope": U, "ermission Denied": U, "trial expired": U,
    "ormat not recognised": F, "Could not find a backend": F, "could not find a writer": F,
    "nsupported MIME type": F, "is out of range. It must be": F,
    # From train13: credentials a server refused (MQTT, LDAP, SSH, SMB's NTSTATUS), a
    # host key that does not verify, API keys wrong or not given, Erlang's connection
    # error, arguments of the wrong count or kind.
    "Bad username or password": U, "nvalid Credentials": U, "Host denied": U,
    "authentication methods failed": U, "STATUS_LOGON_FAILURE": U, "STATUS_ACCESS_DENIED": U,
    "nsufficient Access": U, "ncorrect api key": U, "API Key is incorrect": U,
    "API Key is not provided": U, "econnrefused": T, "ArgumentCountError": F,
    "can't be coerced into": F, "nbalanced parenthes": F,
    # Java's and .NET's exception for an argument the method refuses.
    "IllegalArgumentException": F, "ArgumentException": F,
    # From train15: an SSH host key not trusted, an SMB connection refused (NTSTATUS),
    # LDAP access without its code, AMQP's redeclaration with other arguments, a relative
    # URI where an absolute one is needed, an empty name.
    "ost key is not trusted": U, "STATUS_CONNECTION_REFUSED": T, "nsufficient access": U,
    "inequivalent arg": F, "Only absolute URIs are allowed": F, "must be a non-empty": F,
    # From train14: validators' messages (dacite, class-validator, arktype), compilers'
    # syntax errors, an unbound name, PostGIS's spatial reference ids.
    "missing value for field": F, "wrong value type": F, "must be an email": F,
    "has failed the validation": F, "failed the following constraints": F, "Syntax error": F,
    "unexpected end of input": F, "Unbound value": F, "SRID": F,
    "does not match column type": F,
    # From train17: a memcached key with a space (pymemcache's check), a cloud resource
    # still changing state.
    "Key contains whitespace": F, "in a transient state": T,
    # From train16: expired tokens and signatures, OAuth's device-flow "slow_down", a
    # throttled login, a URL a security policy blocks, OpenSSL's reasons for a key or PEM
    # file the call passed, an algorithm the library does not offer.
    "JWTExpired": U, "SignatureExpired": U, "slow_down": T, "Too Many Attempts": T,
    "blocked by security policy": U, "no start line": F, "key values mismatch": F,
    "nsupported algorithm": F,
}  # fmt: skip

# Texts that decide before any other word: a rate limit a service reports with 403.
# A request too large for a per-minute token limit must shrink: waiting does not help.
OVERRIDE: Mapping[str, Kind] = {
    **dict.fromkeys(
        ["API rate limit exceeded", "secondary rate limit", "rateLimitExceeded",
         "userRateLimitExceeded", "RATE_LIMITED", "You have exceeded a secondary rate limit",
         "API Rate Limit Exceeded", "abuse detection mechanism"], T),
    "Request too large for": F,
    # Input longer than the model's context: whatever status wraps it, it must shrink.
    "ontext size has been exceeded": F,
    # A token whose signature does not verify is refused, not a patch to re-apply.
    "ignature verification failed": U,
    "Quota exceeded for quota": T,
    "does not exist or you do not have access": F,
    # TLS spoken to a plain port (or the reverse): the URL's scheme or port is wrong,
    # whatever connection error wraps it.
    "WRONG_VERSION_NUMBER": F,
    "wrong version number": F,
    # Let's Encrypt's certificates per domain are a weekly limit: waiting a minute does
    # not lift it, whatever "too many requests" says around it.
    "oo many certificates already issued": U,
}  # fmt: skip

# Broad wording that counts only when no word, printed code or HTTP status decides: an
# API's 403 "invalid User-Agent" is the 403's, not a value to change.
WEAK: Mapping[str, Kind] = {"invalid ": F}
# A library's own "Invalid X" decides over the other words, but a status printed with
# it decides over it: a 401 that says "Invalid or missing API key" is the 401's.
YIELDS_TO_STATUS: frozenset[str] = frozenset({"Invalid "})

CODES: Mapping[str, Kind] = code_kinds()

# HTTP statuses whose next action is clear; 404, 405, 409, 410 and the rest stay
# ambiguous.  A 405 is the caller's wrong method as often as an operation the server
# never offers: the real-world corpus's training rows say both.
HTTP_KIND: Mapping[int, Kind] = {
    400: F, 401: U, 402: U, 403: U, 407: U, 408: T, 422: F, 451: U, 501: U, 511: U,
    429: T, 500: T, 502: T, 503: T, 504: T, 520: T, 521: T, 522: T, 524: T, 529: T,
}  # fmt: skip

_PRIORITY = {A: 0, U: 1, T: 2, F: 3}

# Characters per 10,000 in tool results: the larger of two counts, one over source
# files, JSON and prose, one over error texts.  Unlisted characters are rare.
_FREQUENCY: Mapping[str, float] = {
    " ": 2104, "e": 830, "r": 747, "t": 605, "o": 589, "a": 420, "s": 416, "i": 407, "n": 398,
    "\n": 279, "l": 253, "/": 234, "c": 229, "p": 222, ":": 218, "'": 214, "d": 194, "u": 189,
    '"': 176, "m": 164, "h": 160, ".": 144, "_": 142, "f": 135, "g": 128, ",": 113, "=": 109,
    "E": 108, "y": 106, "0": 104, "-": 85, "b": 81, "v": 78, "1": 76, "T": 72, "4": 71,
    ")": 60, "(": 60, "`": 55, "R": 50, "C": 50, "2": 49, "x": 48, "w": 46, "^": 46, "P": 46,
    "F": 40, "S": 38, "k": 38, "{": 33, "}": 33, "A": 30, "]": 28, "[": 28, "q": 28, "8": 27,
    "N": 26, "I": 25, "3": 24, "L": 23, "U": 23, "5": 21, "#": 21, ">": 20, "D": 18, "O": 18,
    "H": 18, "M": 16, "7": 15, "z": 15, "9": 14, "6": 14, "*": 13, "j": 12, "W": 10, "|": 10,
    "B": 9, "G": 7, "V": 7, "\\": 6,
}  # fmt: skip


def _frequency(char: str) -> float:
    return _FREQUENCY.get(char, 1.0)


def _anchors(words: Sequence[str]) -> dict[str, int]:
    """Where each word is anchored: a character chosen so that few positions qualify.

    A greedy weighted hitting set: repeatedly take the character that occurs in the
    most remaining words per unit of its frequency in text.  Each word is then
    anchored at its least frequent chosen character.
    """
    remaining = set(words)
    chosen: set[str] = set()
    while remaining:
        counts: dict[str, int] = {}
        for word in remaining:
            for char in set(word):
                counts[char] = counts.get(char, 0) + 1
        best = max(sorted(counts), key=lambda c: counts[c] / _frequency(c))
        chosen.add(best)
        remaining = {word for word in remaining if best not in word}
    anchors = {}
    for word in words:
        positions = [i for i, char in enumerate(word) if char in chosen]
        anchors[word] = min(positions, key=lambda i: (_frequency(word[i]), i))
    return anchors


_Leaf = tuple[str, str, Kind, int, bool]


def _trie(leaves: list[_Leaf], entries: list[tuple[Kind, str]], mark: str = "()") -> str:
    """One priority level's words after an anchor, as a regular expression trie.

    Each leaf ``(rest, word, kind, anchor, whole)`` ends in ``(?<=word)()``: the empty
    group's number tells which word matched (``mark=""`` leaves the group out, for a
    pattern that only finds where some word is).  A ``whole`` word must also stand
    alone, with no letter, digit or underscore either side: Stripe's ``rate_limit`` is
    not OpenAI's ``rate_limit_exceeded``.  Branches are ordered by the longest
    word they hold, so where words of one level match at one position the longest
    wins, as in a flat list sorted by length.
    """
    going: dict[str, list[_Leaf]] = {}
    options: list[tuple[int, str, str | None, _Leaf | None]] = []
    for leaf in leaves:
        if leaf[0]:
            going.setdefault(leaf[0][0], []).append((leaf[0][1:], *leaf[1:]))
        else:
            options.append((len(leaf[1]), "", None, leaf))
    for char, sub in going.items():
        options.append((max(len(leaf[1]) for leaf in sub), char, char, None))
    alternatives = []
    for _, _, step, end in sorted(options, key=lambda o: (-o[0], o[1])):
        if step is not None:
            alternatives.append(re.escape(step) + _trie(going[step], entries, mark))
        elif end is not None:
            _, word, kind, anchor, whole = end
            behind = f"(?<={re.escape(word)})" if anchor else ""
            if whole:
                behind += f"(?<![0-9A-Za-z_]{re.escape(word)})(?![0-9A-Za-z_])"
            alternatives.append(behind + mark)
            entries.append((kind, word))
    if len(alternatives) == 1:
        return alternatives[0]
    return f"(?:{'|'.join(alternatives)})"


class Matcher:
    """Finds the highest-priority word of a table in a text.

    Every position holding some word's anchor character is tried; there the
    words anchored on that character are tried level by level (veto, then
    unrecoverable, transient, fixable), each level as a trie, so a word hidden by
    another at the same position never outranks it.  Words listed in ``whole``
    count only as whole tokens: a code table's ``InvalidRequest`` is not found
    inside ``InvalidRequestError``.

    Finding where a word is and which word it is are two patterns.  The search
    over the text has no groups: Python builds a match with a slot for every
    group of its pattern, a thousand here, which costs more than the search.
    Only at a position it found does the pattern of that anchor character, whose
    empty groups tell the word, run once.
    """

    __slots__ = ("_below", "_levels", "_ranks", "_search", "_words", "entries", "pattern")

    entries: tuple[tuple[Kind, str], ...]
    """The kind and word of each index that :meth:`find` returns."""
    pattern: re.Pattern[str]
    """Where some word of the table is; it has no groups, as the class notes."""

    def __init__(
        self,
        table: Mapping[str, Kind],
        veto: Iterable[str] = (),
        overrides: Mapping[str, Kind] | None = None,
        whole: Iterable[str] = (),
    ) -> None:
        listed: list[tuple[str, Kind, float]] = [(word, A, 0) for word in veto]
        listed += [(w, k, 0.5 + _PRIORITY[k] / 10) for w, k in (overrides or {}).items()]
        listed += [(word, kind, _PRIORITY[kind]) for word, kind in table.items()]
        anchors = _anchors([word for word, _, _ in listed])
        alone = frozenset(whole)
        groups: dict[str, list[tuple[str, Kind, float, int]]] = {}
        for word, kind, rank in listed:
            anchor = anchors[word]
            groups.setdefault(word[anchor], []).append((word, kind, rank, anchor))
        entries: list[tuple[Kind, str]] = []
        ranks: list[float] = []
        # Per anchor character: the index of its first entry, and its levels as
        # (rank, trie with a group per word, the same trie without groups).
        self._levels: dict[str, tuple[int, list[tuple[float, str, str]]]] = {}
        for char, items in groups.items():
            levels = []
            first = len(entries)
            for rank in sorted({item[2] for item in items}):
                leaves = [(w[a + 1 :], w, k, a, w in alone) for w, k, r, a in items if r == rank]
                before = len(entries)
                named = _trie(leaves, entries)
                levels.append((rank, named, _trie(leaves, [], "")))
                ranks.extend([rank] * (len(entries) - before))
            self._levels[char] = (first, levels)
        self.entries = tuple(entries)
        self._ranks = tuple(ranks)
        self.pattern = self._compile(4.0)
        self._search = self.pattern.search
        self._below: dict[float, Callable[..., re.Match[str] | None]] = {}
        self._words: dict[str, tuple[Callable[..., re.Match[str] | None], int]] = {}

    def _compile(self, limit: float) -> re.Pattern[str]:
        """Where a word of a rank below ``limit`` is.

        Each level keeps its own trie, so at any position the pattern chooses
        what the whole pattern would have chosen there among those ranks.
        """
        branches: list[str] = []
        for char, (_, levels) in self._levels.items():
            kept = [bare for rank, _, bare in levels if rank < limit]
            if kept:
                branches.append(f"{re.escape(char)}(?=(?:{'|'.join(kept)}))")
        # No word outranks the limit: a pattern that never matches.
        return re.compile("|".join(branches) or "(?!)")

    def _after(self, rank: float) -> Callable[..., re.Match[str] | None]:
        """The search for the words that outrank ``rank``, compiled on its first use.

        Once a word is found, only a word of a higher priority can change the
        answer, and a pattern of those words alone has fewer positions to try
        in the rest of the text.  Compiled lazily: compiling one for every rank
        at import would add tens of milliseconds to it.
        """
        search = self._below[rank] = self._compile(rank).search
        return search

    def _which(self, text: str, at: int) -> int:
        """Index in :attr:`entries` of the word that a search found at ``at``.

        The anchor character's levels in the same order, so the same word
        matches there; compiled on first use, like :meth:`_after`.
        """
        char = text[at]
        found = self._words.get(char)
        if found is None:
            first, levels = self._levels[char]
            pattern = re.compile(f"{re.escape(char)}(?=(?:{'|'.join(n for _, n, _ in levels)}))")
            found = self._words[char] = (pattern.match, first)
        named = found[0](text, at)
        if named is None:  # the search matched there with the same levels
            raise AssertionError(f"no word at {at} of {text!r}")
        return found[1] + (named.lastindex or 1) - 1

    def find(self, text: str) -> int:
        """Index in :attr:`entries` of the first word of the highest priority, or -1.

        A veto word wins outright; then an override; then unrecoverable before
        transient before fixable.
        """
        match = self._search(text)
        if match is None:
            return -1
        ranks = self._ranks
        best = self._which(text, match.start())
        rank = ranks[best]
        while rank:
            search = self._below.get(rank) or self._after(rank)
            match = search(text, match.end())
            if match is None:
                break
            best = self._which(text, match.start())
            rank = ranks[best]
        return best

    def best(self, text: str) -> tuple[Kind, str] | None:
        """The kind and word that :meth:`find` chooses, if any."""
        index = self.find(text)
        return None if index < 0 else self.entries[index]


COMMON_MATCHER = Matcher(COMMON, VETO)
# Appendix A's words that decided wrongly more often than not on the real-world
# corpus's train split: Node's "fetch failed" stands for a refused connection, a bad
# URL scheme, a redirect loop and a certificate alike.  Its cause, printed after it,
# decides instead; alone it stays ambiguous.
DEMOTED: tuple[str, ...] = ("fetch failed",)
WIDE_TABLE: Mapping[str, Kind] = {
    word: kind
    for word, kind in {**WORDING, **CODES, **COMMON, **WIDE, **EXTRA}.items()
    if word not in DEMOTED
}
# A published code is a name of its own: inside a longer identifier it is another
# name (Stripe's ``InvalidRequestError`` is not AWS's ``InvalidRequest``).  Codes that
# the word lists also hold keep their substring reading.
_LISTED = {**WORDING, **COMMON, **WIDE, **EXTRA, **OVERRIDE}
WHOLE_CODES: frozenset[str] = frozenset(
    code for code in CODES if code not in _LISTED and re.fullmatch(r"[A-Za-z0-9_.-]+", code)
)
WIDE_MATCHER = Matcher(WIDE_TABLE, VETO, OVERRIDE, WHOLE_CODES)
# Python's int() of a word: a value in the data as often as the call's argument.
WEAK_MATCHER = Matcher(WEAK, ("invalid literal for",))

# A status code is an isolated 4xx/5xx number in one of these settings: urllib,
# requests and httpx messages, the SDKs' ``Error code: N``, status lines, and the
# status or code field of a JSON body or a Python dict.
_HTTP_RANK = {str(code): _PRIORITY[kind] for code, kind in HTTP_KIND.items()}
# Only statuses with a kind are looked for; each must stand alone, not inside a
# longer number or a version.
_STATUS_NUMBER = re.compile("(?:" + "|".join(sorted(_HTTP_RANK)) + r")(?<![\d.]\d\d\d)(?!\d)")
# What may stand right before the number, written backwards: the text before a
# number is reversed and matched at its start, one anchored attempt per number.
#   HTTP Error N | Error code: N | HTTP N, HTTP/1.1 N | Client error 'N, Server error 'N
#   status=N, Status code: N, status code N, status N | "status": N, 'status_code': 'N
#   "code": N | returned N, returned error: N | responded with N, failed with N
#   response 'N' (and after the number: " response", " Client Error", " {")
_STATUS_BEFORE_REVERSED = re.compile(
    r" :?rorrE PTTH| :edoc rorrE| (?:(?:\d\.)?\d/)?PTTH|' rorre (?:tneilC|revreS)"
    r"| ?[=:] ?(?:edo[Cc][ _]?)?sutat[Ss]| (?:edo[Cc] )?sutat[Ss]| (?::rorre )?denruter"
    r"| htiw (?:dednopser|deliaf)| rorrEpttH<?| :edoc esnopser PTTH| edoc rorrE| :?rorrE IPA"
    r"|\( ?rorrE IPA| \| |\((?:rorrE|noitpecxE)[A-Za-z]+\b| :esnopser"
    r"|[\"']? ?: ?[\"'](?:(?:edo[Cc]_?)?sutats|edoc)[\"']|' esnopser"
)
_STATUS_AFTER = re.compile(r":? (?:Client|Server) Error\b| \{[\"']| (?:HTTP )?response\b")
# A 400 or 422 alone says the request was refused, not what to change, and real-world
# texts that carry nothing more are ambiguous.  It counts where an HTTP library or an
# SDK raised it for the call (urllib's and the SDKs' own wording, requests' and httpx's
# status lines): there the paper's reading holds.  Otherwise words must say more.
_WEAK = frozenset({"400", "422"})
_LIBRARY_BEFORE_REVERSED = re.compile(r" :?rorrE PTTH| :edoc rorrE|' rorre (?:tneilC|revreS)")
_LIBRARY_AFTER = re.compile(r" (?:Client|Server) Error\b")
_CONTEXT = 24


def http_status(text: str) -> int | None:
    """The HTTP status the text reports whose kind has the highest priority, if any."""
    if "4" not in text and "5" not in text:
        return None
    best = None
    rank = 4
    match = _STATUS_NUMBER.search(text)
    while match is not None:
        code = match.group()
        found = _HTTP_RANK[code]
        start, end = match.span()
        if found < rank and (
            (_LIBRARY_BEFORE_REVERSED if code in _WEAK else _STATUS_BEFORE_REVERSED).match(
                text[max(0, start - _CONTEXT) : start][::-1]
            )
            or (_LIBRARY_AFTER if code in _WEAK else _STATUS_AFTER).match(text, end)
        ):
            best, rank = code, found
        match = _STATUS_NUMBER.search(text, end)
    return None if best is None else int(best)


# "retry after 5", "Retry-After: 5", and an error body's own field ("retry_after": 5,
# "retryAfter": 5, "retry_in_seconds": 27).
_RETRY_HINT = re.compile(
    r"[Rr]etry(?:ing)?(?: in| after|-[Aa]fter:?) \d"
    r"|\"retry_?(?:[Aa]fter|in)(?:_seconds|_ms|Seconds)?\"\s*:\s*\"?\d"
)


def retry_hint(text: str) -> bool:
    """Whether the text tells the caller to retry after a delay."""
    return "etry" in text and _RETRY_HINT.search(text) is not None
