"""`python -m mgpipe` entry point."""

from __future__ import annotations

import sys

from mgpipe.cli import main

sys.exit(main())
