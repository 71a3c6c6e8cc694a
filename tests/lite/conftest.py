"""The Lite tier's fixtures (helpers in lite_helpers.py): one real ATLAS server per module."""

from __future__ import annotations

import pytest
from lite_helpers import start_server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = start_server(tmp_path_factory.mktemp("lite-server"))
    yield srv
    srv.proc.terminate()
    srv.proc.wait(timeout=15)


@pytest.fixture(autouse=True)
def lite_home(tmp_path, monkeypatch):
    """Jobs, pending files and budgets of in-process servers go to a temporary folder, never ~/.atlas."""
    home = tmp_path / "lite-home"
    monkeypatch.setenv("ATLAS_LITE_HOME", str(home))
    return home
