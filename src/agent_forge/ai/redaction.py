"""Masking configured secrets in provider error texts.

A server may echo the key it was sent ("Incorrect API key provided: sk-..."), and a proxy may quote a header.
Every provider's failure passes through `providers._common.guarded`, which masks with `redact` before the text
becomes the message's `errorMessage`; so no event, session file, export or terminal line downstream shows it.
The secrets are the request's API key (from `--api-key`, auth.json, models.json `apiKey`, an environment
variable or a `!command`) and the values of the model's and the request's extra headers (models.json
`headers`, resolved the same ways).
"""

from __future__ import annotations

from typing import Iterable

MASK = "***"
"""What a masked secret becomes in an error text."""

MIN_SECRET_CHARS = 6
"""Shorter values are not masked: they cannot be told from ordinary words (a header `x-flag: on`)."""


def secret_values(api_key: str | None, *header_maps: dict[str, str] | None) -> list[str]:
    """The strings to mask, longest first: `api_key`, each header value, and each word of a multi-word value
    (`Bearer sk-...` hides the token also when the server quotes it alone)."""
    found: set[str] = set()
    for value in (api_key, *(v for headers in header_maps for v in (headers or {}).values())):
        if not isinstance(value, str):
            continue
        for candidate in (value.strip(), *value.split()):
            if len(candidate) >= MIN_SECRET_CHARS:
                found.add(candidate)
    return sorted(found, key=len, reverse=True)


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every occurrence of each secret replaced by `MASK` (secrets longest first, so a value that
    contains another is masked whole)."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text
