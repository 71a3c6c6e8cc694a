"""The meta model defaults to a stronger local model than the task model only when it is installed."""

from __future__ import annotations

from atlas.alma.state.meta_model import STRONGER_LOCAL, default_meta_model


def test_no_stronger_model_installed_means_the_task_model(tmp_path):
    env = {"ATLAS_CACHE_DIR": str(tmp_path)}  # an empty model folder
    model, why = default_meta_model(None, env)
    assert model is None and f"atlas models pull {STRONGER_LOCAL}" in why


def test_provider_or_already_strong_task_models_keep_themselves(tmp_path):
    env = {"ATLAS_CACHE_DIR": str(tmp_path)}
    assert default_meta_model("openai/gpt-4.1-mini", env) == (None, "same as the task model")
    assert default_meta_model(f"local:{STRONGER_LOCAL}", env) == (None, "same as the task model")


def test_a_local_meta_model_gets_a_context_that_fits_two_parents_and_a_module(tmp_path):
    from atlas.alma.state.meta_model import META_N_CTX
    from atlas.infra.llm import make_llm

    gguf = tmp_path / "meta.gguf"
    gguf.write_bytes(b"GGUF")  # never loaded: the backend loads on the first call
    client = make_llm(f"local:{gguf}", n_ctx=META_N_CTX)
    assert client.backend.n_ctx == META_N_CTX >= 16384
    assert make_llm(f"local:{gguf}").backend.n_ctx == 8192  # the task model keeps its own


def test_a_task_model_that_also_writes_the_designs_gets_the_meta_context(tmp_path):
    """`make demo` with only the 0.5B makes it the meta model too; a meta prompt
    must fit the model it is sent to, so that model gets the meta context (it refused an 8,249-token
    genome-editing prompt at 8192)."""
    from atlas.alma.api import build_models
    from atlas.alma.state.config import AlmaConfig
    from atlas.alma.state.meta_model import META_N_CTX

    gguf = tmp_path / "task.gguf"
    gguf.write_bytes(b"GGUF")  # never loaded: the backend loads on the first call
    task, meta = build_models(AlmaConfig(model=f"local:{gguf}"))
    assert meta is task and task.backend.n_ctx == META_N_CTX
    other = tmp_path / "meta.gguf"
    other.write_bytes(b"GGUF")
    task, meta = build_models(AlmaConfig(model=f"local:{gguf}", meta_model=f"local:{other}"))
    assert task.backend.n_ctx == 8192 and meta.backend.n_ctx == META_N_CTX  # each its own


class _Stop(Exception):
    """Raised where `atlas run` would start the search: everything before it has been resolved."""


def _atlas_run_settings(monkeypatch, *args: str) -> dict:
    """The settings `atlas run ARGS` hands to the library: the command runs for real up to the
    call of ``atlas.alma.api.run``, which stops it before a search starts."""
    from typer.testing import CliRunner

    import atlas.alma.api
    from atlas.cli import app

    seen: dict = {}

    def stop(**kwargs):
        seen.update(kwargs)
        raise _Stop

    monkeypatch.setattr(atlas.alma.api, "run", stop)
    result = CliRunner().invoke(app, ["run", *args])
    assert isinstance(result.exception, _Stop), result.output
    for key in ("llm", "meta_llm", "resume", "progress", "run_dir"):
        seen.pop(key)
    return seen


def test_atlas_run_and_the_python_api_resolve_the_same_models_and_defaults(tmp_path, monkeypatch):
    """`atlas run --model M` and `atlas.alma.run(model=M)` start a new run with the same settings:
    the same task model, the same meta model (decided in the library: the stronger local model when
    it is installed, else the task model) and every other default."""
    from atlas.alma.api import new_run_config
    from atlas.alma.state.config import AlmaConfig
    from atlas.alma.state.meta_model import resolve_meta_model

    gguf = tmp_path / "task.gguf"
    gguf.write_bytes(b"GGUF")  # never loaded: the backend loads on the first call
    task = f"local:{gguf}"
    for cache in (None, tmp_path / "empty-cache"):  # as installed here, and with no model installed
        if cache is not None:
            monkeypatch.setenv("ATLAS_CACHE_DIR", str(cache))
        cli = AlmaConfig.build(**_atlas_run_settings(monkeypatch, "--model", task))
        api = new_run_config(model=task)  # what atlas.alma.run(model=task) starts with
        assert cli.model == api.model == task
        assert cli.meta_model == api.meta_model == resolve_meta_model(task, None)[0]
        assert _same_run(cli, api)
        if cache is not None:
            assert api.meta_model is None  # no stronger model: the task model writes the designs
    other = tmp_path / "meta.gguf"
    other.write_bytes(b"GGUF")
    given = new_run_config(model=task, meta_model=f"local:{other}")
    assert given.meta_model == f"local:{other}"
    cli = AlmaConfig.build(
        **_atlas_run_settings(monkeypatch, "--model", task, "--meta-model", f"local:{other}")
    )
    assert _same_run(cli, given)


def _same_run(a, b) -> bool:
    """Every setting equal; the environment's parameters as the environment receives them (the
    command line names its defaults, ``rooms=8``, where the API leaves them to the environment)."""
    strip = {"env_params"}
    return a.model_dump(exclude=strip) == b.model_dump(exclude=strip) and a.env_kwargs() == b.env_kwargs()
