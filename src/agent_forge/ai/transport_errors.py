"""Readable `errorMessage` texts for failures below HTTP: connecting, sending and reading a response.

httpx2 reports these as `ConnectError: All connection attempts failed` (no URL), a bare `ReadError`, an
`ExceptionGroup` from its task group (a port over 65535), or `LocalProtocolError: Illegal header value b'...'`
(which would show a secret). `transport_error` turns each into a `TransportFailure` naming the URL (scheme, host,
port and path only: never the query or credentials, which may hold a key) and the cause; header problems name
the header, never its value. Wording keeps retry policies working: connection failures and broken answers are
retried (`coding/retry_policy.py` matches "cannot connect to" and "closed the connection"), bad URLs are not, and
neither is a TLS handshake the same server would refuse again (a certificate that does not verify, no shared
protocol: `_tls_refusal`), whose text says how to fix it.
"""

from __future__ import annotations

import errno
from typing import Any
from urllib.parse import urlsplit

from .errors import StreamFailure

_CONTROL = frozenset(chr(c) for c in (*range(0x00, 0x20), 0x7F)) - {"\t"}
"""Characters no HTTP field value may hold (RFC 9110 §5.5: CR, LF and NUL are forbidden; other controls are
rejected by httpx2's h11 too)."""


class TransportFailure(StreamFailure):
    """The connection failed or broke; `str()` names the URL (without query) and the cause."""


def shown_url(url: str) -> str:
    """`scheme://host:port/path` of `url`: user info, query and fragment left out."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "(an invalid URL)"
    host = parts.netloc.rpartition("@")[2]
    return f"{parts.scheme}://{host}{parts.path}"


def header_value_problem(value: str) -> str | None:
    """Why `value` cannot be sent as an HTTP header value, as words to follow "it" (`"holds a line break or
    another control character"`, `"holds a non-ASCII character (character 4)"`), or None when it can. httpx2
    sends header values as ASCII, and RFC 9110 §5.5 forbids CR, LF, NUL and other controls; the reason never
    quotes the value (usually a key)."""
    if any(char in _CONTROL for char in value):
        return "holds a line break or another control character"
    for at, char in enumerate(value, 1):
        if ord(char) > 0x7E:
            return f"holds a non-ASCII character (character {at})"
    return None


def check_headers(headers: dict[str, str]) -> None:
    """Raise `TransportFailure` naming the first header whose value `header_value_problem` refuses (its value
    is never shown: it is usually a key)."""
    for name, value in headers.items():
        problem = header_value_problem(str(value))
        if problem:
            raise TransportFailure(f"The request header {name!r} has a value that {problem}, so the request "
                                   "was not sent (the value is not shown)")


PORT_RANGE = "1-65535"
"""The TCP ports a request can go to (RFC 793: port 0 is reserved and cannot be connected to)."""


def check_url(url: str) -> None:
    """Raise `TransportFailure` for a URL whose port is 0 (the socket layer would report some unrelated error;
    ports over 65535 are caught by `transport_error`). Config files are checked at load with the same range."""
    try:
        port = urlsplit(url).port
    except ValueError:
        return  # not a number or over 65535: the transport's own error is named by `transport_error`
    if port == 0:
        raise TransportFailure(f"Invalid URL {shown_url(url)}: the port must be {PORT_RANGE}")


def transport_error(exc: BaseException, url: str, answering: bool) -> StreamFailure:
    """The `TransportFailure` for `exc` raised while requesting `url`; `answering`: the response had begun."""
    import httpx2

    leaf = _leaf(exc)
    where = shown_url(url)
    if isinstance(leaf, StreamFailure):
        return leaf
    if isinstance(leaf, httpx2.LocalProtocolError):  # h11's text quotes the offending header value
        return TransportFailure(f"The request to {where} could not be sent: a request header is invalid "
                                "(the value is not shown)")
    if isinstance(leaf, OverflowError):  # socket.connect() of a port over 65535
        return TransportFailure(f"Invalid URL {where}: the port must be {PORT_RANGE}")
    if isinstance(leaf, (httpx2.UnsupportedProtocol, httpx2.InvalidURL)):  # texts name no URL part
        return TransportFailure(f"Invalid URL {where}: {leaf}")
    if isinstance(leaf, httpx2.ConnectTimeout):
        return TransportFailure(f"cannot connect to {where}: the connection timed out")
    if isinstance(leaf, httpx2.TimeoutException):  # write or pool timeouts (read timeouts are idle timeouts)
        return TransportFailure(f"The request to {where} timed out while being sent")
    if isinstance(leaf, httpx2.ProxyError):
        return TransportFailure(f"The proxy failed to reach {where}: {_connect_cause(leaf)}")  # not retried
    if not answering and (refused := _tls_refusal(leaf, where)) is not None:
        return refused
    import socket  # not at import: the model registry imports this module before RPC's first answer (rpc/early.py)

    if isinstance(leaf, httpx2.ConnectError) or isinstance(leaf, (ConnectionRefusedError, socket.gaierror)):
        return TransportFailure(f"cannot connect to {where}: {_connect_cause(leaf)}")
    if isinstance(leaf, httpx2.DecodingError):  # a compressed body that does not decompress
        return TransportFailure(f"The answer from {where} could not be decoded (its body does not match its "
                                f"Content-Encoding): {leaf}")
    if isinstance(leaf, httpx2.RemoteProtocolError) and (broken := _broken_http(str(leaf))) is not None:
        return TransportFailure(f"The answer from {where} is not valid HTTP: {broken}")
    if not isinstance(leaf, (httpx2.TransportError, OSError)):
        return StreamFailure(f"{type(leaf).__name__}: {leaf}" if str(leaf) else type(leaf).__name__)
    if answering:
        return TransportFailure(f"The server closed the connection mid-answer ({where}){_detail(leaf)}")
    return TransportFailure(f"The server closed the connection before answering ({where}){_detail(leaf)}")


_EXPIRED = frozenset({9, 10})  # X509_V_ERR_CERT_NOT_YET_VALID, X509_V_ERR_CERT_HAS_EXPIRED
_HOSTNAME_MISMATCH = 62  # X509_V_ERR_HOSTNAME_MISMATCH


def _tls_refusal(exc: BaseException, where: str) -> TransportFailure | None:
    """The failure for a TLS handshake the same server would fail again, None for any other cause.

    Deterministic: a certificate that does not verify (`ssl.SSLCertVerificationError`: self-signed, unknown CA,
    another host's, expired) and any other plain `ssl.SSLError` of the handshake (no shared protocol or cipher,
    a plain HTTP port answering TLS). Transient, left to the retried wording: the connection ending or breaking
    mid-handshake (`SSLEOFError`, `SSLZeroReturnError`, `SSLSyscallError`, a reset). The text names the cause and
    how to fix it, and matches no retryable wording (`coding/retry_policy.py`)."""
    import sys

    ssl = sys.modules.get("ssl")  # no TLS was attempted without it (`lazy_ssl.py`): not imported for nothing
    if ssl is None:
        return None
    for cause in _chain(exc):
        if isinstance(cause, ssl.SSLCertVerificationError):
            reason = str(cause.verify_message or cause.reason or cause).rstrip(".")
            return TransportFailure(f"The TLS certificate of {where} could not be verified: {reason} "
                                    f"({_certificate_hint(cause.verify_code)})")
        if type(cause) is ssl.SSLError:  # its subclasses are the transient endings of a connection
            reason = str(cause.reason or cause).replace("_", " ").lower()
            return TransportFailure(f"The TLS handshake with {where} failed: {reason} ({_handshake_hint(reason)})")
    return None


def _certificate_hint(code: int | None) -> str:
    if code == _HOSTNAME_MISMATCH:
        return ("the certificate is issued for another host name: use one it names in the provider's baseUrl, or "
                "give the server a certificate for this name")
    if code in _EXPIRED:
        return "the certificate is outside its validity dates: renew it on the server, or check this machine's clock"
    return ("to trust a self-signed certificate or a private CA, point SSL_CERT_FILE at a PEM file holding it, or "
            "SSL_CERT_DIR at a directory of them")


def _handshake_hint(reason: str) -> str:
    if "wrong version number" in reason:
        return "the server does not speak TLS on that port: use http:// in the provider's baseUrl if it is plain HTTP"
    return "the server's TLS settings do not match this client's: a retry would fail the same way"


def _broken_http(text: str) -> str | None:
    """What h11's `RemoteProtocolError` text says was wrong with the answer, None for a connection that closed
    early (`peer closed connection ...`, `Server disconnected ...`), which stays a retryable broken answer."""
    lowered = text.lower()
    if "peer closed" in lowered or "disconnected" in lowered:
        return None
    if "receive buffer too long" in lowered:
        return "its status line and headers are too large (more than 100 KiB)"
    if "illegal status line" in lowered:
        return "it does not start with an HTTP/1 status line"
    return text[:200] or "a protocol error"


def _leaf(exc: BaseException) -> BaseException:
    """The first non-group exception inside nested ExceptionGroups (anyio task groups wrap connect errors)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _connect_cause(exc: BaseException) -> str:
    import socket

    for cause in _chain(exc):
        if isinstance(cause, socket.gaierror):
            return "the host name could not be resolved"
        if isinstance(cause, ConnectionRefusedError) or getattr(cause, "errno", None) == errno.ECONNREFUSED:
            return "connection refused"
        if isinstance(cause, TimeoutError):
            return "the connection timed out"
        if type(cause).__name__ in ("SSLEOFError", "SSLZeroReturnError"):  # `ssl` itself may not be imported
            return "the server closed the connection during the TLS handshake"
        if isinstance(cause, ConnectionResetError):
            return "the server reset the connection"
    text = str(_chain(exc)[-1]) or type(exc).__name__
    return text if "attempts failed" not in text else "connection failed"


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: Any = exc
    while current is not None and current not in seen and len(seen) < 10:
        seen.append(_leaf(current))
        current = seen[-1].__cause__ or seen[-1].__context__
    return seen


def _detail(exc: BaseException) -> str:
    for cause in _chain(exc):
        if isinstance(cause, ConnectionResetError):
            return ": connection reset"
    return ""
