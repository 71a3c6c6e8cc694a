# The MetaAgent produced no code.
