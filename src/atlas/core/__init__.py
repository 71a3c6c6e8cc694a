"""Core data types."""

from atlas.core.types import *  # noqa: F403
from atlas.core.types import __all__  # noqa: F401
