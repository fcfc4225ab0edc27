"""End to end: a model server over TLS. A certificate the agent cannot verify (self-signed, unknown CA, another
host's) fails the request at once, naming the cause and how to trust the server (`SSL_CERT_FILE`); a connection
that breaks during the handshake is retried like other transient failures; a trusted certificate just works."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support.model_entries import model_entry
from support.tls_relay import TlsRelay, make_certificate


@pytest.fixture(scope="module")
def certificates(tmp_path_factory):
    """`{host: (cert, key)}` for `localhost` and `otherhost`, self-signed, made by the `openssl` command."""
    directory = tmp_path_factory.mktemp("tls")
    made = {host: make_certificate(directory, host) for host in ("localhost", "otherhost")}
    if None in made.values():
        pytest.skip("no openssl command to make a certificate (the cryptography package is not needed)")
    return made


@pytest.fixture
def relays():
    started: list[TlsRelay] = []
    yield started
    for relay in started:
        relay.stop()


def tls_env(agent_env_factory, port: int, **extra: str) -> dict[str, str]:
    """A provider `tls` whose `baseUrl` is `https://localhost:<port>/v1`; retries wait 1 ms."""
    env = agent_env_factory(provider="tls", model_id="m", settings={"retry": {"baseDelayMs": 1}})
    models = Path(env["AGENT_FORGE_DIR"]) / "models.json"
    config = json.loads(models.read_text())
    config["providers"]["tls"].update(baseUrl=f"https://localhost:{port}/v1", models=[model_entry("m")])
    models.write_text(json.dumps(config))
    env.update(extra)
    return env


def run(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_forge", "--no-session", "--model", "tls/m", "-p", "hi"],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def start(relays: list[TlsRelay], certificate: tuple[Path, Path], target: int, **options: bool) -> TlsRelay:
    relays.append(TlsRelay(*certificate, target, **options).start())
    return relays[-1]


def test_a_self_signed_certificate_fails_at_once_and_says_how_to_trust_it(agent_env_factory, fake_llm, project,
                                                                          certificates, relays):
    relay = start(relays, certificates["localhost"], fake_llm.port)
    done = run(tls_env(agent_env_factory, relay.port), project)
    assert done.returncode == 1
    assert relay.connections == 1 and "retry" not in done.stderr.lower(), done.stderr
    url = f"https://localhost:{relay.port}/v1/chat/completions"
    assert f"The TLS certificate of {url} could not be verified: self-signed certificate" in done.stderr
    assert "SSL_CERT_FILE" in done.stderr and fake_llm.requests == []


def test_another_hosts_certificate_fails_at_once_naming_the_host_name(agent_env_factory, fake_llm, project,
                                                                     certificates, relays):
    cert, key = certificates["otherhost"]
    relay = start(relays, (cert, key), fake_llm.port)
    done = run(tls_env(agent_env_factory, relay.port, SSL_CERT_FILE=str(cert)), project)
    assert done.returncode == 1 and relay.connections == 1, done.stderr
    assert "could not be verified: Hostname mismatch, certificate is not valid for 'localhost'" in done.stderr
    assert "baseUrl" in done.stderr and fake_llm.requests == []


def test_a_certificate_trusted_through_ssl_cert_file_is_answered(agent_env_factory, fake_llm, project,
                                                                 certificates, relays):
    cert, key = certificates["localhost"]
    relay = start(relays, (cert, key), fake_llm.port)
    fake_llm.set_script([{"text": "over tls"}])
    done = run(tls_env(agent_env_factory, relay.port, SSL_CERT_FILE=str(cert)), project)
    assert (done.returncode, done.stdout.strip()) == (0, "over tls"), done.stderr


def test_a_connection_closed_during_the_handshake_is_retried(agent_env_factory, fake_llm, project, certificates,
                                                             relays):
    relay = start(relays, certificates["localhost"], fake_llm.port, hang_up=True)
    done = run(tls_env(agent_env_factory, relay.port), project)
    assert done.returncode == 1
    assert relay.connections == 4, done.stderr  # the first attempt and 3 retries
    cause = done.stderr.partition(f"cannot connect to https://localhost:{relay.port}/v1/chat/completions: ")[2]
    assert cause.strip() in ("the server closed the connection during the TLS handshake (after 4 attempts)",
                             "the server reset the connection (after 4 attempts)"), done.stderr  # unread: RST


def test_tls_to_a_plain_http_port_fails_at_once_suggesting_http(agent_env_factory, fake_llm, project):
    done = run(tls_env(agent_env_factory, fake_llm.port), project)  # the fake server speaks plain HTTP
    assert done.returncode == 1
    assert f"The TLS handshake with https://localhost:{fake_llm.port}/v1/chat/completions failed" in done.stderr
    assert "use http://" in done.stderr and "attempts" not in done.stderr, done.stderr
