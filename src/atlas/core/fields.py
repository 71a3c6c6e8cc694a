"""Pydantic validation errors said for a person who wrote the data: a field that is not one names the
fields there are at that place, instead of pydantic's "Extra inputs are not permitted"."""

from __future__ import annotations

import difflib
import typing
from typing import Any

from pydantic import BaseModel


def model_at(root: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model that holds the last field of ``loc`` (a pydantic error's location) under ``root``."""
    model: type[BaseModel] = root
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        info = model.model_fields.get(str(part))
        inner = _model_in(info.annotation) if info is not None else None
        if inner is None:
            return None
        model = inner
    return model


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model an annotation holds (itself, or inside a list, an Optional, a dict's values)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        if (found := _model_in(arg)) is not None:
            return found
    return None


def not_a_field(root: type[BaseModel], loc: tuple[Any, ...], listed: int = 12) -> str:
    """'not a field here (did you mean b?); the fields are a, b, c' for an unknown field at ``loc`` under
    ``root`` (the fields listed where there are at most ``listed``)."""
    model = model_at(root, loc)
    if model is None:
        return "not a field here"
    fields = list(model.model_fields)
    close = difflib.get_close_matches(str(loc[-1]), fields, n=1) if loc else []
    said = "not a field here" + (f" (did you mean {close[0]}?)" if close else "")
    return said + (f"; the fields are {', '.join(fields)}" if len(fields) <= listed else "")


__all__ = ["model_at", "not_a_field"]
