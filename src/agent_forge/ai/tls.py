"""One verifying TLS context for the process's model requests.

httpx builds a new `ssl.SSLContext` for every client it is not given one, and building one loads the whole CA
bundle: about 20 ms of CPU for each model request (each turn of a tool-using run), even for `http://` servers.
The context is the one httpx would build (`httpcore2.default_ssl_context`: `SSL_CERT_FILE` / `SSL_CERT_DIR`
when set, else the system's CA files); it is built again when those variables change (an SDK user or an
in-process test may set them between runs).
"""

from __future__ import annotations

import os
import ssl
import threading

_lock = threading.Lock()
_cached: tuple[tuple[str | None, str | None], ssl.SSLContext] | None = None


def shared_ssl_context() -> ssl.SSLContext:
    """The process's verifying SSLContext for the current `SSL_CERT_FILE` / `SSL_CERT_DIR`."""
    global _cached
    key = (os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
    with _lock:
        if _cached is None or _cached[0] != key:
            import httpcore2

            _cached = (key, httpcore2.default_ssl_context())
        return _cached[1]
