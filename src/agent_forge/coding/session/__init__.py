"""The session store: one conversation as an append-only JSONL tree on disk (format: `docs/rpc.md`, seed 000).

`store.py` (`SessionStore`: entries, leaf, branch, typed `append_*` methods) is the entry point; `entries.py`
holds the entry shapes, `reading.py` parses a file, `durable.py` writes it crash-safely, `writer.py` keeps lines
the OS refused until a write succeeds, `migrations.py` upgrades old versions, `lock.py` is the single-writer
lock, `context.py` builds the model's context from the active branch, `tree.py` the tree view, `listing.py`
and `home.py` find sessions on disk, `stats.py` counts them. Nothing here knows the session hub.
"""
