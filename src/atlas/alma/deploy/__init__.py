"""After the search: export a design as a package, serve it as memory, re-learn its memory."""
