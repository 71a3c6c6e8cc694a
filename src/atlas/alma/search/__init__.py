"""The search: ``Search`` (orchestration of one run), its steps (baseline and seeds, a genome
generation, evaluate → record) and the public entry points (``run``, ``arun``, ``aevaluate``)."""
