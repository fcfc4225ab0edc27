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
