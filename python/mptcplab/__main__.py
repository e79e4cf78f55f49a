"""`python -m mptcplab` is the `mptcplab` command."""
from .cli import main

raise SystemExit(main())
