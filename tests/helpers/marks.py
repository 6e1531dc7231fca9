"""Marks that place a live test in the exclusive phase's schedule (scripts/test.sh, tests/conftest.py)."""

from __future__ import annotations

import pytest

# Modules that bring up several namespaces of minishop at once (a campaign's workers, two sites, a Job
# beside its own app): at most one of them runs at a time, so the node's CPU requests and its two
# cores hold them and one other module's minishop.
SEVERAL_NAMESPACES = pytest.mark.xdist_group("several-namespaces")
