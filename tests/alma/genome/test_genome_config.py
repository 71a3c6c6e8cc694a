"""Run folders written before genome search keep searching code when resumed; new runs pick by model."""

from __future__ import annotations

import json

from atlas.alma.state.config import AlmaConfig


def test_a_config_without_representation_resumes_as_code(tmp_path):
    path = tmp_path / "config.json"
    data = AlmaConfig.build(env="graphworld").model_dump()
    data.pop("representation")
    data.pop("genome_candidates")
    data.pop("probe_tasks")
    path.write_text(json.dumps(data))
    assert AlmaConfig.load(path).representation == "code"


def test_new_runs_default_to_auto_and_keep_a_chosen_representation(tmp_path):
    assert AlmaConfig.build(env="graphworld").representation == "auto"
    cfg = AlmaConfig.build(env="graphworld", representation="genome", genome_candidates=5)
    path = tmp_path / "config.json"
    cfg.save(path)
    loaded = AlmaConfig.load(path)
    assert (loaded.representation, loaded.genome_candidates) == ("genome", 5)
