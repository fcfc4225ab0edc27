"""A loopback TLS front for a plain test server: each connection's handshake is made with the given certificate,
then bytes are relayed both ways to `127.0.0.1:<target port>` (or, with `hang_up`, the connection is closed at
once, before any handshake: a transient TLS failure). Certificates come from the `openssl` command
(`make_certificate`): the tests never need the `cryptography` package."""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
from pathlib import Path


def make_certificate(directory: Path, host: str = "localhost") -> tuple[Path, Path] | None:
    """A self-signed certificate for `host` (valid one day) and its key, or None without an `openssl` command."""
    if shutil.which("openssl") is None:
        return None
    cert, key = directory / f"{host}-cert.pem", directory / f"{host}-key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={host}",
                    "-addext", f"subjectAltName=DNS:{host}", "-keyout", str(key), "-out", str(cert), "-days", "1"],
                   check=True, capture_output=True, timeout=60)
    return cert, key


class TlsRelay:
    """`TlsRelay(cert, key, target_port).start()`; `port` is where it listens; `handshakes` counts connections
    accepted (attempts), `stop()` closes everything."""

    def __init__(self, cert: Path, key: Path, target_port: int, *, hang_up: bool = False):
        self._context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._context.load_cert_chain(cert, key)
        self._target, self._hang_up = target_port, hang_up
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.connections = 0
        self._stopped = threading.Event()

    def start(self) -> TlsRelay:
        threading.Thread(target=self._accept, name="tls-relay", daemon=True).start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        self._listener.close()

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return  # stopped
            self.connections += 1
            if self._hang_up:
                conn.close()
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            secure = self._context.wrap_socket(conn, server_side=True)
        except (ssl.SSLError, OSError):
            conn.close()  # the client refused the certificate
            return
        upstream = socket.create_connection(("127.0.0.1", self._target))
        threading.Thread(target=_pump, args=(upstream, secure), daemon=True).start()
        _pump(secure, upstream)


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, sink):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # the other direction ended it first
            end.close()
