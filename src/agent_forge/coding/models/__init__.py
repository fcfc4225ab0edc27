"""Models and credentials: the catalogue, `models.json`, `auth.json`, key values and model selection.

Modules: `registry` (`ModelRegistry`, the front the session uses), `models_json` (reading `models.json` onto
the built-in catalogue) with `schema` (its field checks), `hosts` (hosts without built-in models),
`credentials` (key lookup order, request headers, why a model has no key), `auth_file` (`auth.json`),
`key_values` (`!command`, `$VAR` and literal key values), `selection` (`--model` patterns, the start-up model).
`control` changes the model, thinking level and context window of a running session.
"""
