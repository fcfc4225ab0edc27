"""Resources that shape a session to its user and project: context files, skills, prompt templates,
system-prompt files, the `get_commands` listing, and project trust.

Modules: `loader` (what a session loads: `load_resources`, `SessionResources`), `context_files`, `skills`,
`templates`, `expansion` (`/skill:name` and `/template` input), `commands` (`get_commands` items,
`CommandSource`), `trust` (project trust and `ProjectPolicy`), `frontmatter`, `sources`.
"""
