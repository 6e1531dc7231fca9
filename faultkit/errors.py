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
