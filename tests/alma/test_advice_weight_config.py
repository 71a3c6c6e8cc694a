"""The advice weight a run was played with is the one it resumes with, whatever the default is now."""

from __future__ import annotations

import json

from atlas.agent.advice_match import ADVICE_WEIGHT, ADVICE_WEIGHT_BEFORE
from atlas.alma.state.config import AlmaConfig


def test_new_runs_take_the_default_and_keep_a_chosen_weight(tmp_path):
    assert AlmaConfig.build(env="graphworld").advice_weight == ADVICE_WEIGHT == 10.0
    path = tmp_path / "config.json"
    AlmaConfig.build(env="graphworld", advice_weight=3.0).save(path)
    assert AlmaConfig.load(path).advice_weight == 3.0
    AlmaConfig.build(env="graphworld").save(path)
    assert AlmaConfig.load(path).advice_weight == ADVICE_WEIGHT


def test_a_config_written_before_the_setting_resumes_with_the_weight_of_then(tmp_path):
    path = tmp_path / "config.json"
    data = AlmaConfig.build(env="graphworld").model_dump()
    data.pop("advice_weight")
    path.write_text(json.dumps(data))
    assert AlmaConfig.load(path).advice_weight == ADVICE_WEIGHT_BEFORE == 3.0


def test_a_setting_of_no_name_says_the_closest():
    import pytest

    from atlas.errors import ConfigError

    with pytest.raises(ConfigError, match=r"max_minute: not a field here \(did you mean max_minutes\?\)"):
        AlmaConfig.build(max_minute=3)
