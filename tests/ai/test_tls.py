"""Model requests share one verifying TLS context per process (building one per request loaded the CA bundle
each time); a change of SSL_CERT_FILE / SSL_CERT_DIR builds a new one, as httpx would."""

from __future__ import annotations

import ssl

import pytest

from agent_forge.ai import tls


def test_one_verifying_context_while_the_variables_stay(monkeypatch):
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    first = tls.shared_ssl_context()
    assert first is tls.shared_ssl_context()
    assert first.verify_mode == ssl.CERT_REQUIRED and first.check_hostname


def test_a_new_cert_file_gives_a_new_context(monkeypatch, tmp_path):
    cafile = ssl.get_default_verify_paths().openssl_cafile
    if not cafile or not __import__("os").path.isfile(cafile):
        pytest.skip("no system CA file to point SSL_CERT_FILE at")
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    before = tls.shared_ssl_context()
    monkeypatch.setenv("SSL_CERT_FILE", cafile)
    after = tls.shared_ssl_context()
    assert after is not before and after is tls.shared_ssl_context()
    assert after.cert_store_stats()["x509_ca"] > 0


_PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")


def _no_proxies(monkeypatch):
    for name in _PROXY_VARS:
        monkeypatch.delenv(name, raising=False)


def test_plain_http_without_a_proxy_gets_a_context_that_trusts_nothing(monkeypatch):
    _no_proxies(monkeypatch)
    context = tls.ssl_context_for("http://127.0.0.1:8080/v1/chat/completions")
    assert context is not tls.shared_ssl_context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname  # a TLS connection fails closed
    assert context.cert_store_stats()["x509_ca"] == 0
    assert tls.ssl_context_for("HTTP://localhost/v1") is context


def test_https_gets_the_shared_verifying_context(monkeypatch):
    _no_proxies(monkeypatch)
    assert tls.ssl_context_for("https://api.example.com/v1/messages") is tls.shared_ssl_context()


@pytest.mark.parametrize("variable", ["HTTPS_PROXY", "http_proxy", "ALL_PROXY"])
def test_any_proxy_makes_plain_http_use_the_shared_context(monkeypatch, variable):
    _no_proxies(monkeypatch)
    monkeypatch.setenv(variable, "https://proxy.example:3128")  # the proxy itself may be reached over TLS
    assert tls.ssl_context_for("http://127.0.0.1:8080/v1") is tls.shared_ssl_context()
