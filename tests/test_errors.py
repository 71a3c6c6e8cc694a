"""The exception tree: every public exception lives in ``atlas.errors``, derives from
``AtlasError``, is exported and is drawn in the module docstring (httpx's exported-members test)."""

from __future__ import annotations

import re

import atlas.errors as errors


def test_exported_members():
    public = sorted(
        name
        for name, value in vars(errors).items()
        if not name.startswith("_") and isinstance(value, type) and value.__module__ == errors.__name__
    )
    assert errors.__all__ == public


def test_every_exception_is_an_atlas_error_and_in_the_documented_tree():
    for name in errors.__all__:
        cls = getattr(errors, name)
        assert issubclass(cls, errors.AtlasError), name
        assert re.search(rf"^[\s│]*(?:[├└]── )?{name}\b", errors.__doc__, re.M), name


def test_search_stopped_is_the_one_in_errors():
    from atlas.alma.search.loop import SearchStopped

    assert SearchStopped is errors.SearchStopped
