"""Connecting to a Ray cluster: the one place that imports Ray, with errors that say what to do.

``--ray-address auto`` joins the cluster this machine belongs to (``ray start`` ran here, or
``$RAY_ADDRESS``) and starts a local one when there is none; ``HOST:PORT`` must answer within
``timeout_s`` or the run stops with a ``ClusterError`` naming the address, never a hang.
"""

from __future__ import annotations

import socket
from types import ModuleType
from typing import Any

from atlas.errors import ClusterError, ConfigError

INSTALL_HINT = (
    "--executor ray needs Ray, an optional extra: pip install 'atlas-memory[ray]' "
    "(or pip install ray==2.60.0 in this environment)"
)
CONNECT_TIMEOUT_S = 15.0
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def import_ray() -> ModuleType:
    """The ``ray`` module, or a ConfigError saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(INSTALL_HINT) from exc
    return ray


def _probe(address: str, timeout_s: float) -> None:
    """Fail fast when nothing listens at ``HOST:PORT`` (ray.init would retry for minutes)."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        raise ConfigError(f"--ray-address must be 'auto' or HOST:PORT (the head's GCS port), got {address!r}")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout_s) as sock:
            # A Ray head's GCS speaks gRPC (HTTP/2): it answers the client preface with a SETTINGS frame.
            # Anything else (a web server, a closed service that accepts and waits) would make ray.init
            # wait for minutes.
            sock.sendall(HTTP2_PREFACE + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")
            frame = sock.recv(9)
    except OSError as exc:
        raise ClusterError(
            f"no Ray cluster answers at {address} (within {timeout_s:.0f}s: {exc}); start one with "
            "`ray start --head --port 6379` (see docs/cluster.md), or pass --ray-address auto "
            "to start a local one"
        ) from exc
    if len(frame) < 9 or frame[3] != 0x04:
        raise ClusterError(
            f"{address} answers, but not as a Ray head (no gRPC reply within {timeout_s:.0f}s); give the "
            "head's GCS port (`ray start --head --port PORT`, default 6379)"
        )


def connect(address: str | None, *, timeout_s: float = CONNECT_TIMEOUT_S) -> bool:
    """Join (or start) a Ray cluster; True when this call connected (then ``disconnect`` later).
    Already connected (e.g. a test or a notebook called ``ray.init``): that session is used."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    quiet: dict[str, Any] = {"log_to_driver": False, "logging_level": "WARNING", "configure_logging": False}
    if address in (None, "", "auto"):
        try:
            ray.init(address="auto", **quiet)
        except ConnectionError:  # no cluster here: start one on this machine, with one local-model slot
            ray.init(resources={"llm": 1}, include_dashboard=False, **quiet)
        return True
    assert address is not None
    _probe(address, timeout_s)
    try:
        ray.init(address=address, **quiet)
    except (ConnectionError, RuntimeError, TimeoutError) as exc:
        raise ClusterError(f"cannot join the Ray cluster at {address}: {exc}") from exc
    return True


def disconnect() -> None:
    ray = import_ray()
    if ray.is_initialized():
        ray.shutdown()


__all__ = ["CONNECT_TIMEOUT_S", "INSTALL_HINT", "connect", "disconnect", "import_ray"]
