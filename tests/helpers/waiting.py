"""Polling for the tests on real servers and clusters: one loop that fails with what it waited for."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest


def wait_until(check: Callable[[], Any], timeout: float, what: str, interval: float = 1.0) -> Any:
    """Poll `check` until it returns something truthy, and return that; fail naming `what`."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}", pytrace=False)
        time.sleep(interval)
