"""Host-side design 'memory_system': atlas.memory MemorySystemImpl (experiences, concepts, strategies).

Trusted adapter in atlas.alma.baselines.host; it runs in the host process, not in the sandbox."""
