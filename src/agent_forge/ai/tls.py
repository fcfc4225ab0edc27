"""One verifying TLS context for the process's model requests.

httpx builds a new `ssl.SSLContext` for every client it is not given one, and building one loads the whole CA
bundle: about 20 ms of CPU for each model request (each turn of a tool-using run), even for `http://` servers.
The context is the one httpx would build (`httpcore2.default_ssl_context`: `SSL_CERT_FILE` / `SSL_CERT_DIR`
when set, else the system's CA files); it is built again when those variables change (an SDK user or an
in-process test may set them between runs).

A plain `http://` request (a local model server) makes no TLS connection: redirects are not followed and, with
no proxy configured, nothing else is dialled. It gets a context that loads no CA bundle at all and still
verifies (no trust anchors: any certificate is refused), so the 20 ms are not spent for nothing and a TLS
connection that did happen would fail closed, never unverified.
"""

from __future__ import annotations

import os
import ssl
import threading

_lock = threading.Lock()
_cached: tuple[tuple[str | None, str | None], ssl.SSLContext] | None = None
_no_anchors: ssl.SSLContext | None = None


def ssl_context_for(url: str) -> ssl.SSLContext:
    """The context for a request to `url`: `shared_ssl_context()` for `https://` (and for any URL while a proxy
    is configured, which may itself be `https://`); for a plain `http://` URL without a proxy, a verifying
    context without trust anchors, which costs no CA bundle load (~1 ms instead of ~20 ms of CPU)."""
    global _no_anchors
    if not url[:7].lower() == "http://" or _proxied():
        return shared_ssl_context()
    with _lock:
        if _no_anchors is None:
            _no_anchors = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED and check_hostname: fails closed
        return _no_anchors


def _proxied() -> bool:
    """True when httpx would route a request through a proxy (it reads the same `getproxies()`)."""
    from urllib.request import getproxies  # httpx imports it anyway

    proxies = getproxies()
    return any(proxies.get(scheme) for scheme in ("http", "https", "all"))


def shared_ssl_context() -> ssl.SSLContext:
    """The process's verifying SSLContext for the current `SSL_CERT_FILE` / `SSL_CERT_DIR`."""
    global _cached
    key = (os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
    with _lock:
        if _cached is None or _cached[0] != key:
            import httpcore2

            _cached = (key, httpcore2.default_ssl_context())
        return _cached[1]
