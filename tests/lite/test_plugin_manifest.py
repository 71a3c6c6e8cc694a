"""The Claude Code plugin and the Codex files are valid against the formats their documentation
gives (written here as JSON Schemas), and everything they name exists."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import jsonschema
import pytest
from lite_helpers import HOOK, PLUGIN, ROOT

PATHS = {
    "anyOf": [
        {"type": "string", "pattern": r"^\./"},
        {"type": "array", "items": {"type": "string", "pattern": r"^\./"}},
    ]
}

# .claude-plugin/plugin.json (Claude Code plugins reference: "name" is required, kebab-case; the
# rest is metadata or component paths relative to the plugin root, starting with ./)
PLUGIN_SCHEMA = {
    "type": "object",
    "required": ["name"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "pattern": r"^[a-z0-9]+(-[a-z0-9]+)*$"},
        "version": {"type": "string", "pattern": r"^\d+\.\d+\.\d+([-+].+)?$"},
        "description": {"type": "string", "minLength": 1},
        "author": {
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string"},
                "email": {"type": "string"},
                "url": {"type": "string"},
            },
            "additionalProperties": False,
        },
        "homepage": {"type": "string"},
        "repository": {"type": "string"},
        "license": {"type": "string"},
        "keywords": {"type": "array", "items": {"type": "string"}},
        "commands": PATHS,
        "agents": PATHS,
        "skills": PATHS,
        "outputStyles": PATHS,
        "hooks": {"anyOf": [PATHS, {"type": "object"}]},
        "mcpServers": {"anyOf": [PATHS, {"type": "object"}]},
        "lspServers": {"anyOf": [PATHS, {"type": "object"}]},
    },
}

CLAUDE_EVENTS = [
    "PreToolUse", "PostToolUse", "Notification", "UserPromptSubmit", "Stop", "SubagentStop",
    "PreCompact", "SessionStart", "SessionEnd", "PermissionRequest", "SubagentStart",
]  # fmt: skip
CODEX_EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"]
CODEX_SESSION_END_CAP = 3  # seconds: Codex gives SessionEnd hooks 1 s by default and at most 3 s


def hooks_schema(events: list[str]) -> dict:
    """hooks.json: {"hooks": {EVENT: [{"matcher"?, "hooks": [{"type": "command", "command", "timeout"?}]}]}}."""
    handler = {
        "type": "object",
        "required": ["type", "command"],
        "properties": {
            "type": {"const": "command"},
            "command": {"type": "string", "minLength": 1},
            "timeout": {"type": "number", "exclusiveMinimum": 0},
        },
    }
    group = {
        "type": "object",
        "required": ["hooks"],
        "properties": {
            "matcher": {"type": "string"},
            "hooks": {"type": "array", "minItems": 1, "items": handler},
        },
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "required": ["hooks"],
        "properties": {
            "description": {"type": "string"},
            "hooks": {
                "type": "object",
                "propertyNames": {"enum": events},
                "additionalProperties": {"type": "array", "items": group},
            },
        },
        "additionalProperties": False,
    }


MCP_SCHEMA = {
    "type": "object",
    "required": ["mcpServers"],
    "properties": {
        "mcpServers": {
            "type": "object",
            "additionalProperties": {
                "oneOf": [
                    {
                        "type": "object",
                        "required": ["type", "url"],
                        "properties": {
                            "type": {"enum": ["http", "sse"]},
                            "url": {"type": "string", "pattern": r"^(https?://|\$\{)"},
                        },
                    },
                    {
                        "type": "object",
                        "required": ["command"],
                        "properties": {"command": {"type": "string"}},
                    },
                ]
            },
        }
    },
}

MARKETPLACE_SCHEMA = {
    "type": "object",
    "required": ["name", "owner", "plugins"],
    "properties": {
        "name": {"type": "string", "pattern": r"^[a-z0-9]+(-[a-z0-9]+)*$"},
        "owner": {"type": "object", "required": ["name"]},
        "plugins": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["name", "source"],
                "properties": {"source": {"type": "string", "pattern": r"^\./"}},
            },
        },
    },
}


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


STANDARD = {"hooks": "hooks/hooks.json", "mcpServers": ".mcp.json", "skills": "skills"}


def test_plugin_manifest_is_valid_and_its_parts_sit_where_they_are_loaded_from():
    manifest = load(PLUGIN / ".claude-plugin" / "plugin.json")
    jsonschema.validate(manifest, PLUGIN_SCHEMA)
    # Claude Code loads hooks/hooks.json, .mcp.json and skills/ from the plugin root by itself; a
    # manifest that names them again makes it load them twice ("Duplicate hooks file detected")
    for key, standard in STANDARD.items():
        assert (PLUGIN / standard).exists(), f"{standard} is missing"
        named = manifest.get(key, [])
        assert not any(
            Path(PLUGIN / n).resolve() == (PLUGIN / standard).resolve()
            for n in ([named] if isinstance(named, str) else named)
        ), key


def test_the_schema_catches_a_broken_manifest():
    for bad in (
        {},
        {"name": "Atlas Memory"},
        {"name": "atlas", "hooks": "/abs/hooks.json"},
        {"name": "a", "hoks": "./x"},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, PLUGIN_SCHEMA)


def test_hooks_json_is_valid_and_runs_the_script_for_each_event():
    hooks = load(PLUGIN / "hooks" / "hooks.json")
    jsonschema.validate(hooks, hooks_schema(CLAUDE_EVENTS))
    expected = {
        "SessionStart": "session-start",
        "UserPromptSubmit": "prompt",
        "Stop": "stop",
        "SessionEnd": "session-end",
    }
    assert set(hooks["hooks"]) == set(expected)
    for event, arg in expected.items():
        (handler,) = hooks["hooks"][event][0]["hooks"]
        assert handler["command"] == f'python3 -S "${{CLAUDE_PLUGIN_ROOT}}/hooks/atlas_hook.py" {arg}'
        assert handler["timeout"] <= 5
    assert HOOK.is_file()


def test_mcp_json_follows_atlas_lite_url():
    """The MCP tools go where the hooks go: ``${ATLAS_LITE_URL:-default}``, which Claude Code
    expands in .mcp.json (the same default as the hook script's)."""
    mcp = load(PLUGIN / ".mcp.json")
    jsonschema.validate(mcp, MCP_SCHEMA)
    server = mcp["mcpServers"]["atlas"]
    assert server["type"] == "http"
    m = re.fullmatch(r"\$\{ATLAS_LITE_URL:-(?P<default>[^}]+)\}/mcp", server["url"])
    assert m, server["url"]
    hook_default = re.search(r'"ATLAS_LITE_URL", "([^"]+)"', HOOK.read_text()).group(1)
    assert m.group("default") == hook_default == "http://127.0.0.1:8765"


def test_skill_has_the_documented_frontmatter():
    text = (PLUGIN / "skills" / "atlas-memory" / "SKILL.md").read_text(encoding="utf-8")
    m = re.match(r"^---\n(.*?)\n---\n", text, re.S)
    assert m, "SKILL.md must start with a --- frontmatter block"
    fields = dict(line.split(": ", 1) for line in m.group(1).splitlines())
    assert re.fullmatch(r"[a-z0-9-]{1,64}", fields["name"])
    assert 0 < len(fields["description"]) <= 1024
    for tool in ("get_guidelines", "save_trajectory", "list_guidelines", "delete_guideline"):
        assert tool in text


def test_marketplace_lists_the_plugin():
    market = load(ROOT / ".claude-plugin" / "marketplace.json")
    jsonschema.validate(market, MARKETPLACE_SCHEMA)
    (entry,) = market["plugins"]
    assert (ROOT / entry["source"]).resolve() == PLUGIN.resolve()
    assert entry["name"] == load(PLUGIN / ".claude-plugin" / "plugin.json")["name"]


def test_codex_files():
    config = tomllib.loads((ROOT / "integrations" / "codex" / "config.toml").read_text(encoding="utf-8"))
    assert config["mcp_servers"]["atlas"] == {"url": "http://127.0.0.1:8765/mcp"}
    hooks = load(ROOT / "integrations" / "codex" / "hooks.json")
    jsonschema.validate(hooks, hooks_schema(CODEX_EVENTS))
    expected = {
        "SessionStart": "session-start",
        "UserPromptSubmit": "prompt",
        "Stop": "stop",
        "SessionEnd": "session-end",
    }
    assert set(hooks["hooks"]) == set(expected)
    for event, arg in expected.items():
        assert hooks["hooks"][event][0]["hooks"][0]["command"].endswith(
            f"/integrations/claude-code/hooks/atlas_hook.py {arg}"
        )
    assert hooks["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"] <= CODEX_SESSION_END_CAP
    text = (ROOT / "integrations" / "codex" / "config.toml").read_text(encoding="utf-8")
    assert "trust" in text  # Codex asks the user to trust command hooks before it runs them


@pytest.mark.skipif(shutil.which("claude") is None, reason="the claude CLI is not installed here")
def test_claude_plugin_validate_accepts_it():  # pragma: no cover - needs Claude Code
    out = subprocess.run(
        ["claude", "plugin", "validate", str(PLUGIN)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stdout + out.stderr
