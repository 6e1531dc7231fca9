"""shoplib: the small shared library every minishop service is built with.

It is copied beside each service's main.py in the build, so services simply
`from shoplib import ...`.
"""

from shoplib.client import DependencyError, call, request
from shoplib.config import listen_host, require_port
from shoplib.http import App, HTTPError, Request, Response
from shoplib.log import Logger

__all__ = [
    "App",
    "DependencyError",
    "HTTPError",
    "Logger",
    "Request",
    "Response",
    "call",
    "listen_host",
    "request",
    "require_port",
]
