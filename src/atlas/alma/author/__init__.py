"""Writing designs: the MetaAgent and DebugAgent, their prompts, the ``ast`` edit/crossover
operators, the cheap checks (smoke run, advice probe) and the analyses of parents' logs.

Imports ``atlas.alma.evaluate`` (to run a design in a smoke run) and ``atlas.alma.state``."""
