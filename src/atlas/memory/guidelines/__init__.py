"""atlas.memory.guidelines — procedural memory learned from trajectories (ALTK-Evolve style).

Pipeline, one module per stage, each a swappable strategy object:
intelligence (thought kinds, patterns, outcome class) → attribution (causes, with step indices) →
segmentation (subtasks; task-level for ablation) → tips (strategy / recovery / optimization) →
generalize (strip entities) → consolidate (cluster at cosine 0.85, ADD/UPDATE/DELETE/NONE, logged) →
retrieval (cosine threshold + top-k, or one LLM selection call).

    bank = GuidelineBank.open("./mem", namespace="shop", llm=make_llm("haiku"))
    bank.save_trajectory(trajectory_or_openai_messages)      # -> ids of tips added/updated
    bank.get_guidelines("log in to the shop", k=5)           # -> list[Guideline]
    for t in read_transcript("session.jsonl").trajectories:  # Claude Code / Codex transcript
        bank.save(t)                                          #   one trajectory per turn
"""

from atlas.memory.guidelines.attribution import Attribution, Attributor, LLMAttributor, NoAttributor
from atlas.memory.guidelines.bank import GuidelineBank, SaveResult
from atlas.memory.guidelines.config import GuidelineConfig, OutcomeRules, check_namespace
from atlas.memory.guidelines.consolidate import Decider, LLMDecider, RuleDecider, cluster
from atlas.memory.guidelines.generalize import Generalizer, LLMGeneralizer, RuleGeneralizer
from atlas.memory.guidelines.host import GuidelineDesign
from atlas.memory.guidelines.intelligence import (
    LLMThoughtClassifier,
    RuleThoughtClassifier,
    ThoughtClassifier,
    TrajectoryAnalyzer,
    TrajectoryIntelligence,
)
from atlas.memory.guidelines.messages import episode_to_trajectory, messages_to_trajectory, parse_trajectory
from atlas.memory.guidelines.render import format_guideline, format_guidelines
from atlas.memory.guidelines.retrieval import CosineRetriever, LLMSelector, Retriever
from atlas.memory.guidelines.segmentation import LLMSegmenter, Segmenter, SegmentSpec, TaskLevelSegmenter
from atlas.memory.guidelines.store import GuidelineStore
from atlas.memory.guidelines.tips import LLMTipGenerator, TipGenerator
from atlas.memory.guidelines.transcripts import Transcript, read_transcript

__all__ = [
    "Attribution",
    "Attributor",
    "CosineRetriever",
    "Decider",
    "Generalizer",
    "GuidelineBank",
    "GuidelineConfig",
    "GuidelineDesign",
    "GuidelineStore",
    "LLMAttributor",
    "LLMDecider",
    "LLMGeneralizer",
    "LLMSegmenter",
    "LLMSelector",
    "LLMThoughtClassifier",
    "LLMTipGenerator",
    "NoAttributor",
    "OutcomeRules",
    "Retriever",
    "RuleDecider",
    "RuleGeneralizer",
    "RuleThoughtClassifier",
    "SaveResult",
    "SegmentSpec",
    "Segmenter",
    "TaskLevelSegmenter",
    "ThoughtClassifier",
    "TipGenerator",
    "TrajectoryAnalyzer",
    "TrajectoryIntelligence",
    "Transcript",
    "check_namespace",
    "cluster",
    "episode_to_trajectory",
    "format_guideline",
    "format_guidelines",
    "messages_to_trajectory",
    "parse_trajectory",
    "read_transcript",
]
