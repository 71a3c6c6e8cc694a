"""Generalization keeps what a coding tip is about (commands, flags, project and system paths,
packages with their versions) and still removes the names of one task (tickets, one-off files)."""

from __future__ import annotations

import pytest

from atlas.memory.guidelines.generalize import RuleGeneralizer

KEPT = [
    ("Tests must be run with `make test`, never bare pytest", ["`make test`", "pytest"]),
    ("Edit /etc/nginx/nginx.conf, then run `sudo nginx -t`", ["/etc/nginx/nginx.conf", "`sudo nginx -t`"]),
    ("Pin numpy<2.0 in requirements.txt: pandas 1.5 breaks on NumPy 2", ["numpy<2.0", "requirements.txt"]),
    ("Install with pip install 'django>=4.2,<5' and python 3.12", ["'django>=4.2,<5'", "3.12"]),
    ("Pass --no-cache-dir to pip and -x to pytest", ["--no-cache-dir", "-x"]),
    ("Run tests/test_cart.py::test_totals first", ["tests/test_cart.py::test_totals"]),
    (
        'The build reads "config/settings.yaml", not ./settings.yaml',
        ['"config/settings.yaml"', "./settings.yaml"],
    ),
    ('Start the stack with "docker compose up -d testdb"', ['"docker compose up -d testdb"']),
    ("Migrations live in src/shop/migrations/", ["src/shop/migrations/"]),
]


@pytest.mark.parametrize(("text", "kept"), KEPT)
def test_what_a_coding_tip_is_about_is_kept(text, kept):
    g = RuleGeneralizer()
    for out in (g.generalize_text(text), g.generalize_description(text)):
        for span in kept:
            assert span in out, (span, out)


def test_one_task_names_are_still_abstracted():
    g = RuleGeneralizer()
    out = g.generalize_text("For PROJ-1234 and #42, run `git checkout -b fix/PROJ-1234` then `make test`")
    assert "PROJ-1234" not in out and "#42" not in out
    assert "`git checkout -b fix/<ticket>`" in out and "`make test`" in out
    # a person's files and a one-off quoted name are still abstracted
    assert g.generalize_text('open "Quarterly report.xlsx" at /home/u/docs/a.txt') == (
        "open a named item at a file path"
    )
    assert g.generalize_text("Retry after 30 seconds, the run id is 3f9a2c1d7e5b") == (
        "Retry after N seconds, the run id is an id"
    )
    # environment tips (ALMA's domains) lose their ids as before
    assert g.generalize_text("take 'red key' from room_B") == "take a named item from a room"


def test_private_use_characters_in_the_input_do_not_confuse_the_spans():
    out = RuleGeneralizer().generalize_text("run `make test` \ue000 then `make lint`")
    assert out == "run `make test` then `make lint`"


async def test_tips_from_the_pipeline_keep_their_commands(embedder):
    """Through the bank's extraction stages (scripted model): the tip's text, trigger and steps
    keep `make test`, `/etc/nginx/nginx.conf` and `numpy<2.0`."""
    import json

    from atlas.infra.llm import ScriptedLLM
    from atlas.memory.guidelines import GuidelineBank
    from atlas.memory.guidelines.prompts import stage_of
    from guideline_doubles import auto_responder

    base = auto_responder(segments=1, tips=1)
    tip = {
        "category": "strategy",
        "content": "Run the tests with `make test`, never bare pytest; pin numpy<2.0",
        "trigger": "before editing /etc/nginx/nginx.conf or running the tests",
        "implementation_steps": ["run `make test`", "check /etc/nginx/nginx.conf with `sudo nginx -t`"],
        "purpose": "the Makefile sets PYTHONPATH",
        "application_context": "this project",
        "task_category": "testing",
        "priority": "high",
    }

    def respond(messages, **kw):
        return json.dumps({"tips": [tip]}) if stage_of(messages) == "tips" else base(messages, **kw)

    bank = GuidelineBank(llm=ScriptedLLM(respond), embedder=embedder)
    traj = {
        "task": "run the tests for PROJ-1234",
        "success": True,
        "messages": [
            {"role": "user", "content": "run the tests"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "Bash", "arguments": {"command": "make test"}},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "24 passed"},
        ],
    }
    result = await bank.asave(traj)
    assert result.status == "processed", result.reason
    (g,) = bank.store.get_many(result.guideline_ids)
    assert "`make test`" in g.content and "numpy<2.0" in g.content
    assert "/etc/nginx/nginx.conf" in g.trigger
    assert g.implementation_steps == tip["implementation_steps"]
    assert "PROJ-1234" not in str(g.metadata.get("task"))
