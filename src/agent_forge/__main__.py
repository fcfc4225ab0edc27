"""`python -m agent_forge`: same as the `agent-forge` console script."""

from .cli import main

raise SystemExit(main())
