"""ATLAS: memory for LLM agents that learn from experience, and ALMA, a search for memory designs."""

__version__ = "0.1.0"

__all__ = ["__version__"]
