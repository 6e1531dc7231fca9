"""One exception root. The core raises these; only the command layer prints them."""

from __future__ import annotations


class FaultkitError(Exception):
    """A problem the user can act on. The message is one line: where, what, and what to do."""

    kind = "Error"


class UsageError(FaultkitError):
    """The command was called wrongly (exit 2)."""

    kind = "UsageError"


class InputError(FaultkitError):
    """A file or value given to faultkit is unreadable or invalid (exit 1)."""

    kind = "InputError"


class PlatformError(FaultkitError):
    """The platform cannot do what was asked, or is not in the state the operation needs."""

    kind = "PlatformError"


class NotReady(PlatformError):
    """A change was applied but what it rolled out never became ready (the message says what was done about it)."""

    kind = "NotReady"


class Unsupported(PlatformError):
    """An operation this platform cannot carry out; the message names a platform that can."""

    kind = "Unsupported"


class CheckFailed(FaultkitError):
    """A build's own lint or unit tests failed (in its image, or its Maven build): the build is rejected."""

    def __init__(self, service: str, what: str, failing: tuple[str, ...], output: str,
                 where: str = "in its image") -> None:
        self.service, self.what, self.failing, self.output = service, what, failing, output
        names = ", ".join(failing) if failing else _last_lines(output)
        super().__init__(f"{service}: the service's {what} failed {where}: {names}; fix the change and rebuild")


def _last_lines(output: str, n: int = 3) -> str:
    lines = [ln.strip() for ln in output.splitlines() if ln.strip() and not ln.startswith((" --->", "Step "))]
    return " | ".join(lines[-n:])[:300]
