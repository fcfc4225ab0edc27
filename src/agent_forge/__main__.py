"""`python -m agent_forge`: same as the `agent-forge` console script."""

from .console import main

raise SystemExit(main())
