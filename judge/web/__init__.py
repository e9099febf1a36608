"""What the two local web apps (`judge serve`, `judge label`) share below their own roles:
the request guard against cross-site pages and DNS rebinding (`guard`), body limits
(`limits`) and the uvicorn server settings that keep slow clients from holding it (`server`).
"""

from judge.web.guard import RequestGuard, is_loopback_address, json_only, send_error
from judge.web.limits import BodyLimit
from judge.web.server import serve, server_config

__all__ = [
    "BodyLimit",
    "RequestGuard",
    "is_loopback_address",
    "json_only",
    "send_error",
    "serve",
    "server_config",
]
