"""`ai.transport_errors`: every transport failure names the URL without query or credentials, never a header
value, and keeps its retryability."""

from __future__ import annotations

import httpx2
import pytest

from agent_forge.ai.transport_errors import TransportFailure, check_headers, check_url, shown_url, transport_error
from agent_forge.coding.retry_policy import is_retryable_error

URL = "https://user:pw@host.example:8443/v1/messages?key=secret-in-query"
SHOWN = "https://host.example:8443/v1/messages"


def refused() -> httpx2.ConnectError:
    try:
        try:
            raise ConnectionRefusedError(111, "Connect call failed")
        except ConnectionRefusedError as inner:
            raise OSError("All connection attempts failed") from inner
    except OSError as outer:
        error = httpx2.ConnectError("All connection attempts failed")
        error.__cause__ = outer
        return error


@pytest.mark.parametrize("exc,answering,text,retried", [
    (refused(), False, f"cannot connect to {SHOWN}: connection refused", True),
    (httpx2.ConnectTimeout(""), False, f"cannot connect to {SHOWN}: the connection timed out", True),
    (httpx2.WriteTimeout(""), False, f"The request to {SHOWN} timed out while being sent", True),
    (httpx2.ReadError(""), True, f"The server closed the connection mid-answer ({SHOWN})", True),
    (httpx2.RemoteProtocolError("peer closed"), False,
     f"The server closed the connection before answering ({SHOWN})", True),
    (ExceptionGroup("unhandled errors in a TaskGroup", [OverflowError("port must be 0-65535")]), False,
     f"Invalid URL {SHOWN}: the port must be 1-65535", False),
    (httpx2.InvalidURL("Invalid port: 'abc'"), False, f"Invalid URL {SHOWN}: Invalid port: 'abc'", False),
    (httpx2.LocalProtocolError("Illegal header value b'Bearer sk-SECRET'"), False,
     f"The request to {SHOWN} could not be sent: a request header is invalid (the value is not shown)", False),
])
def test_transport_errors_name_the_url_and_cause(exc, answering, text, retried):
    message = str(transport_error(exc, URL, answering))
    assert message == text and is_retryable_error(message) is retried
    assert "secret" not in message.lower() and "pw" not in message


def test_shown_url_drops_credentials_query_and_fragment():
    assert shown_url(URL + "#frag") == SHOWN


@pytest.mark.parametrize("value", ["Bearer sk-SECRET\nX: 1", "a\rb", "nul\x00", "esc\x1b[0m", "sk-漢SECRET",
                                   "SECRETé", "del\x7f"])
def test_a_header_value_with_control_characters_is_refused_by_name(value):
    with pytest.raises(TransportFailure) as caught:
        check_headers({"accept": "text/event-stream", "authorization": value})
    assert "'authorization'" in str(caught.value) and value not in str(caught.value)
    assert "SECRET" not in str(caught.value)


def test_header_value_problems_are_named_without_the_value():
    from agent_forge.ai.transport_errors import header_value_problem

    assert header_value_problem("Bearer sk-abc_123-XYZ=~") is None and header_value_problem("a\tb") is None
    assert header_value_problem("sk-漢") == "holds a non-ASCII character (character 4)"
    assert header_value_problem("a\nb") == "holds a line break or another control character"


def test_a_url_with_port_zero_is_refused_before_any_connection():
    """The socket layer would give an unrelated error for port 0; the range is the one models.json is checked
    against at load."""
    with pytest.raises(TransportFailure) as caught:
        check_url("http://user:pw@127.0.0.1:0/v1/chat/completions?key=secret")
    assert str(caught.value) == "Invalid URL http://127.0.0.1:0/v1/chat/completions: the port must be 1-65535"
    check_url("http://127.0.0.1:8080/v1")  # an ordinary port passes
    check_url("http://127.0.0.1/v1")


def tls_failure(cause: BaseException) -> httpx2.ConnectError:
    error = httpx2.ConnectError(str(cause))
    error.__cause__ = cause
    return error


def unverified(code: int, message: str):
    import ssl

    cause = ssl.SSLCertVerificationError(1, f"[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: {message}")
    cause.verify_code, cause.verify_message = code, message
    return tls_failure(cause)


@pytest.mark.parametrize("code,message,fix", [
    (10, "certificate has expired", "renew it on the server, or check this machine's clock"),
    (20, "unable to get local issuer certificate", "point SSL_CERT_FILE at a PEM file"),
    (62, "Hostname mismatch, certificate is not valid for 'host.example'.", "use one it names in the provider's"),
])
def test_a_certificate_that_does_not_verify_is_named_with_its_fix_and_not_retried(code, message, fix):
    text = str(transport_error(unverified(code, message), URL, answering=False))
    assert text.startswith(f"The TLS certificate of {SHOWN} could not be verified: {message.rstrip('.')} (")
    assert fix in text and not is_retryable_error(text)


def test_a_handshake_broken_by_the_server_stays_retryable():
    import ssl

    text = str(transport_error(tls_failure(ssl.SSLEOFError(8, "EOF occurred in violation of protocol")), URL,
                               answering=False))
    assert text == f"cannot connect to {SHOWN}: the server closed the connection during the TLS handshake"
    assert is_retryable_error(text)
