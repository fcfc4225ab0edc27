"""`lazy_ssl.defer_ssl`: asyncio imports without OpenSSL, and TLS over the event loop works once anything imports
`ssl` (a real handshake between an asyncio server and client). Each case runs in a fresh interpreter: the
finder changes that process's imports."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

_CHILD = """
import sys
from agent_forge.lazy_ssl import defer_ssl
defer_ssl()
import asyncio
assert "ssl" not in sys.modules and "_ssl" not in sys.modules, "asyncio imported ssl"
assert asyncio.base_events.ssl is None and asyncio.sslproto.ssl is None
import {first}  # the first importer of ssl: not asyncio
import ssl
assert asyncio.base_events.ssl is ssl and asyncio.selector_events.ssl is ssl and asyncio.sslproto.ssl is ssl
assert asyncio.sslproto.SSLAgainErrors == (ssl.SSLWantReadError, ssl.SSLSyscallError)
assert not any(type(finder).__module__ == "agent_forge.lazy_ssl" for finder in sys.meta_path)

async def main(cert, key):
    server_side = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_side.load_cert_chain(cert, key)
    client_side = ssl.create_default_context(cafile=cert)

    async def echo(reader, writer):
        writer.write(await reader.readline())
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0, ssl=server_side)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client_side, server_hostname="localhost")
    writer.write(b"over tls\\n")
    line = await reader.readline()
    writer.close()
    server.close()
    return line

print(asyncio.run(main(sys.argv[1], sys.argv[2])).decode().strip())
"""


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    """A self-signed certificate for `localhost` (made by the `openssl` command) and its key."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make a certificate")
    directory = tmp_path_factory.mktemp("tls")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost", "-keyout", str(key), "-out", str(cert),
                    "-days", "1"], check=True, capture_output=True, timeout=60)
    return cert, key


@pytest.mark.parametrize("first", ["ssl", "agent_forge.ai.tls"])
def test_tls_over_the_loop_works_once_ssl_is_imported(certificate, first):
    cert, key = certificate
    proc = subprocess.run([sys.executable, "-c", _CHILD.replace("{first}", first), str(cert), str(key)],
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode().strip() == "over tls"


def test_nothing_is_deferred_when_ssl_or_asyncio_came_first():
    child = ("import sys, asyncio\nfrom agent_forge.lazy_ssl import defer_ssl, _FINDER\ndefer_ssl()\n"
             "assert _FINDER not in sys.meta_path and asyncio.base_events.ssl is sys.modules['ssl']\n")
    proc = subprocess.run([sys.executable, "-c", child], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
