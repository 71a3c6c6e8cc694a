"""Host-side design 'guideline_bank': atlas.memory.guidelines GuidelineBank (strategy/recovery/optimization tips).

Trusted adapter in atlas.alma.baselines.host; it runs in the host process, not in the sandbox."""
