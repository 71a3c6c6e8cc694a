"""``atlas.plugins`` lists every extension point and re-exports the registries: each ``register_*``
there is the very function of its owning module, so old imports and new ones register alike."""

from __future__ import annotations

import subprocess
import sys

import pytest

import atlas.plugins as plugins
from atlas.alma.baselines import register_host_design
from atlas.envs.registry import register_env
from atlas.infra.llm.providers import register_provider
from atlas.infra.plugins import load_plugins
from atlas.memory.primitives import register_primitive_loader

OLD_PATHS = {
    "register_env": register_env,
    "register_provider": register_provider,
    "register_host_design": register_host_design,
    "register_primitive_loader": register_primitive_loader,
    "load_plugins": load_plugins,
}


@pytest.mark.parametrize("name", sorted(OLD_PATHS))
def test_each_registry_is_the_same_object_as_at_its_old_path(name):
    assert getattr(plugins, name) is OLD_PATHS[name]
    assert name in plugins.__all__


def test_every_extension_point_resolves_and_the_registries_are_all_listed():
    listed = {p.name for p in plugins.EXTENSION_POINTS if p.kind == "registry"}
    assert listed == {n for n in OLD_PATHS if n.startswith("register_")}
    for point in plugins.EXTENSION_POINTS:
        assert plugins.resolve(point.target) is not None, point
        assert point.kind in ("registry", "loading", "protocol") and point.adds


def test_a_provider_registered_through_atlas_plugins_reaches_make_llm():
    from atlas.infra.llm import ScriptedLLM, make_llm

    plugins.register_provider("via-plugins", lambda rest: ScriptedLLM([rest]))
    assert make_llm("via-plugins:ok").complete([{"role": "user", "content": "?"}]).text == "ok"


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="no_such_thing"):
        plugins.no_such_thing  # noqa: B018


def test_importing_it_loads_no_registry_module():
    code = "import sys, atlas.plugins; print('atlas.alma.baselines' in sys.modules, 'atlas.envs.registry' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["False", "False"], out.stderr[-2000:]
