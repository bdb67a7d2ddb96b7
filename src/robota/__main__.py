"""``python -m robota`` runs the ``robota`` command."""

from robota.cli import main

raise SystemExit(main())
