"""A client that closes its event stream is not a server error: the SDK's traceback for it is dropped
(one per finished session filled an unread stderr pipe and hung the server), any other error stays."""

from __future__ import annotations

import logging
import sys

import anyio

from atlas.mcp_stdio import ClientGoneFilter, quiet_client_gone


def _record(exc: BaseException) -> logging.LogRecord:
    try:
        raise exc
    except BaseException:
        info = sys.exc_info()
    return logging.LogRecord(
        "mcp.server.streamable_http", logging.ERROR, __file__, 1, "Error in standalone SSE writer", None, info
    )


def test_a_closed_client_stream_is_dropped_and_real_errors_stay():
    f = ClientGoneFilter()
    assert f.filter(_record(anyio.ClosedResourceError())) is False
    assert f.filter(_record(anyio.BrokenResourceError())) is False
    assert f.filter(_record(ValueError("a real bug"))) is True
    assert f.filter(logging.LogRecord("x", logging.ERROR, __file__, 1, "no exception", None, None)) is True


def test_the_filter_is_installed_once_on_the_sdk_logger():
    quiet_client_gone()
    quiet_client_gone()
    sdk = logging.getLogger("mcp.server.streamable_http")
    assert sum(isinstance(f, ClientGoneFilter) for f in sdk.filters) == 1
