"""``python -m ainotes`` runs the command line."""

from ainotes.cli import main

raise SystemExit(main())
