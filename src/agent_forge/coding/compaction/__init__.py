"""Compaction: keeping long sessions within the model's context window (summary and verbatim-line strategies).

Modules: `controller` (triggers, events, abort; `AgentSession.compaction`), `cut_points` (where a summary cuts),
`summary` (seed 000 strategy), `verbatim` (seed 003 strategy) with `line_ranges` (its deletion ranges),
`request` (summarisation calls and their retries), `prompts` (our prompt texts and their versions),
`transcript` (messages as text, file lists), `tokens` (context size and threshold), `branch` (branch
summaries). Provider overflow errors are recognised by `ai/overflow.py`.
"""
