"""Tips as markdown files: the format, atomic writes, the index derived from them (real Chroma, the
real MiniLM embedder), and the hook script reading the same files when no server answers."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from lite_helpers import free_port, hook_input, load_hook_module, run_hook

from atlas.core.types import Guideline
from atlas.errors import InvalidInputError
from atlas.memory.guidelines.tipfiles import TipFile, count_use, find_tip, read_tips, remove_tip, write_tip

MAKE_TEST = "Tests must be run with `make test`, never bare pytest."
RELATED = "how do I run the tests?"
UNRELATED = "write a haiku about autumn leaves"


def tip(content: str = MAKE_TEST, tip_id: str = "tip-0a1b2c3d4e5f", trigger: str = "tests") -> TipFile:
    return TipFile(
        tip_id, content, kind="strategy", trigger=trigger, source=["cc-1"], created="2026-11-29T01:00:00Z"
    )


def test_a_tip_file_reads_back_as_written_and_the_hook_parses_it_the_same(tmp_path):
    folder = tmp_path / "tips"
    path = write_tip(folder, tip())
    assert path is not None and path.parent == folder and path.suffix == ".md"
    text = path.read_text()
    assert text.startswith("---\nid: tip-0a1b2c3d4e5f\nkind: strategy\ntrigger: tests\n")
    assert text.rstrip().endswith(MAKE_TEST)
    (back,), problems = read_tips(folder)
    assert problems == [] and (back.id, back.content, back.trigger, back.source) == (
        "tip-0a1b2c3d4e5f",
        MAKE_TEST,
        "tests",
        ["cc-1"],
    )
    hooked = load_hook_module().parse_tip(text)
    assert hooked["content"] == back.content and hooked["trigger"] == back.trigger and hooked["id"] == back.id
    # no temporary file is left behind, and a second write of the same id keeps the first file
    assert sorted(p.name for p in folder.iterdir()) == [path.name]
    assert write_tip(folder, tip(content="something else")) is None
    assert read_tips(folder)[0][0].content == MAKE_TEST


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("just text\n", "no front matter"),
        ("---\nkind: strategy\n---\nbody\n", "id must be"),
        ("---\nid: t1\n---\n\n", "no text"),
        ("---\nid: t1\nkind: wisdom\n---\nbody\n", "kind must be"),
        ("---\nid: t1\nuses: many\n---\nbody\n", "uses must be"),
        ("---\nid: t1\nno colon here\n---\nbody\n", "is not 'key: value'"),
    ],
)
def test_a_broken_tip_file_is_reported_and_the_others_still_load(tmp_path, text, reason):
    write_tip(tmp_path, tip())
    (tmp_path / "broken.md").write_text(text)
    tips, problems = read_tips(tmp_path)
    assert [t.id for t in tips] == ["tip-0a1b2c3d4e5f"]
    (problem,) = problems
    assert "broken.md" in problem and reason in problem
    with pytest.raises(InvalidInputError, match=reason):
        TipFile.parse(text)


def test_find_and_remove_by_id_prefix_or_file_name(tmp_path):
    a = write_tip(tmp_path, tip(tip_id="tip-aaaa1111"))
    write_tip(tmp_path, tip(content="Run `make lint` before a commit.", tip_id="tip-aaab2222"))
    assert find_tip(tmp_path, "tip-aaaa").id == "tip-aaaa1111"
    assert find_tip(tmp_path, a.name).id == "tip-aaaa1111"
    with pytest.raises(InvalidInputError, match="matches 2 tips"):
        find_tip(tmp_path, "tip-aaa")
    with pytest.raises(InvalidInputError, match="no tip"):
        find_tip(tmp_path, "tip-zzz")
    remove_tip(tmp_path, "tip-aaaa1111")
    assert [t.id for t in read_tips(tmp_path)[0]] == ["tip-aaab2222"]
    # learned again later: a removed tip does not come back
    assert write_tip(tmp_path, tip(tip_id="tip-aaaa1111")) is None
    assert [t.id for t in read_tips(tmp_path)[0]] == ["tip-aaab2222"]


def test_uses_are_counted_unless_the_file_changed_meanwhile(tmp_path):
    path = write_tip(tmp_path, tip())
    (seen,), _ = read_tips(tmp_path)
    count_use(seen)
    assert read_tips(tmp_path)[0][0].uses == 1
    path.write_text(path.read_text().replace(MAKE_TEST, "Edited by hand."))
    count_use(seen)  # the person's edit wins
    assert read_tips(tmp_path)[0][0].uses == 1 and "Edited by hand." in path.read_text()


def test_from_a_guideline_keeps_its_steps_and_provenance(tmp_path):
    g = Guideline(
        category="recovery",
        content="When `sudo nginx -t` fails, fix /etc/nginx/nginx.conf",
        trigger="nginx fails",
        implementation_steps=["run `sudo nginx -t`", "reload with `sudo systemctl reload nginx`"],
        source_trajectory_ids=["cc-9"],
    )
    t = TipFile.from_guideline(g, "model")
    assert t.content.endswith("- reload with `sudo systemctl reload nginx`")
    back = TipFile.parse(t.to_text()).to_guideline()
    assert (back.id, back.category, back.source_trajectory_ids) == (g.id, "recovery", ["cc-9"])


def _index(tmp_path, embedder, folder):
    from atlas.infra.vector_index import ChromaVectorStore
    from atlas.memory.guidelines.tip_index import TipIndex

    return TipIndex(folder, ChromaVectorStore.persistent(tmp_path / "chroma", "tips"), embedder)


def test_the_index_follows_the_files(tmp_path, embedder):
    folder = tmp_path / "tips"
    write_tip(folder, tip())
    write_tip(folder, tip("Ask before publishing a release to PyPI.", "tip-release0001", "a release"))
    index = _index(tmp_path, embedder, folder)
    (hit, score), *_ = index.search(RELATED)
    assert hit.content == MAKE_TEST and score >= index.floor
    assert index.search(UNRELATED) == []
    assert index.sync() == {"embedded": 0, "removed": 0, "kept": 2}  # unchanged folder: nothing redone

    # edit the file by hand: the next search returns the new text
    path = hit.path
    path.write_text(
        path.read_text().replace(MAKE_TEST, "Run the tests with `make test-fast` while iterating.")
    )
    (hit, _), *_ = index.search(RELATED)
    assert "`make test-fast`" in hit.content
    # delete it: gone from the index too
    os.unlink(path)
    assert all(t.id != "tip-0a1b2c3d4e5f" for t, _ in index.search(RELATED))
    assert index.vectors.count_sync() == 2  # the remaining tip's text and trigger

    # a new process (a restarted server) reuses the stored vectors: nothing is embedded again
    again = _index(tmp_path, embedder, folder)
    assert again.sync() == {"embedded": 0, "removed": 0, "kept": 1}


def test_the_prompt_hook_reads_the_files_when_no_server_answers(tmp_path):
    project = tmp_path / "shop"
    folder = project / ".atlas" / "tips"
    write_tip(folder, tip())
    env = {
        "PATH": "",
        "HOME": str(tmp_path / "home"),
        "ATLAS_LITE_URL": f"http://127.0.0.1:{free_port()}",
        "ATLAS_LITE_AUTOSTART": "0",
    }
    run = run_hook("prompt", hook_input("UserPromptSubmit", project, prompt=RELATED), env)
    assert run.returncode == 0 and run.stderr == ""
    context = run.context()["additionalContext"]
    assert "`make test`" in context and context.startswith("Guidelines learned from earlier sessions")
    run = run_hook("prompt", hook_input("UserPromptSubmit", project, prompt=UNRELATED), env)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")

    # another folder, named by ATLAS_TIPS_DIR (relative to the project)
    other = project / "docs" / "agent-tips"
    write_tip(other, tip("Deploys go through `make deploy`, never by hand.", "tip-deploy000001", "deploys"))
    env["ATLAS_TIPS_DIR"] = "docs/agent-tips"
    run = run_hook("prompt", hook_input("UserPromptSubmit", project, prompt="how do I deploy this?"), env)
    assert "`make deploy`" in run.context()["additionalContext"]
    assert "`make test`" not in run.stdout


def test_tips_cli_list_show_edit_rm(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from atlas.cli import app

    project = tmp_path / "shop"
    folder = project / ".atlas" / "tips"
    write_tip(folder, tip())
    runner = CliRunner()
    listed = runner.invoke(app, ["tips", "list", "--project", str(project), "--json"])
    assert listed.exit_code == 0, listed.output
    (row,) = json.loads(listed.stdout)
    assert row["id"] == "tip-0a1b2c3d4e5f" and row["content"] == MAKE_TEST
    shown = runner.invoke(app, ["tips", "show", "tip-0a1b", "--project", str(project)])
    assert shown.exit_code == 0 and "id: tip-0a1b2c3d4e5f" in shown.stdout and MAKE_TEST in shown.stdout

    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys, pathlib\np = pathlib.Path(sys.argv[1])\n"
        "p.write_text(p.read_text().replace('never bare pytest', 'never bare pytest or tox'))\n"
    )
    monkeypatch.setenv("EDITOR", f"{os.sys.executable} {editor}")
    edited = runner.invoke(app, ["tips", "edit", "tip-0a1b", "--project", str(project)])
    assert edited.exit_code == 0, edited.output
    assert read_tips(folder)[0][0].content.endswith("never bare pytest or tox.")

    broken = tmp_path / "breaker.py"
    broken.write_text("import sys, pathlib\npathlib.Path(sys.argv[1]).write_text('oops')\n")
    monkeypatch.setenv("EDITOR", f"{os.sys.executable} {broken}")
    bad = runner.invoke(app, ["tips", "edit", "tip-0a1b", "--project", str(project)])
    assert bad.exit_code != 0 and "no front matter" in bad.output
    assert read_tips(folder)[0][0].content.endswith("never bare pytest or tox.")  # the tip is kept

    removed = runner.invoke(app, ["tips", "rm", "tip-0a1b", "--project", str(project)])
    assert removed.exit_code == 0 and "removed" in removed.stdout
    assert read_tips(folder) == ([], [])
    missing = runner.invoke(app, ["tips", "rm", "tip-0a1b", "--project", str(project)])
    assert missing.exit_code != 0 and "no tip" in missing.output


def test_hook_and_library_agree_on_the_default_folder(tmp_path):
    from atlas.cli.tips import tips_folder

    hook = load_hook_module()
    project = tmp_path / "shop"
    project.mkdir()
    assert Path(hook.tips_dir(str(project))) == tips_folder(project, None)


def test_the_skills_example_tip_is_a_valid_tip_file():
    import re

    from lite_helpers import PLUGIN

    text = (PLUGIN / "skills" / "atlas-memory" / "SKILL.md").read_text(encoding="utf-8")
    block = re.search(r"```markdown\n(.*?)```", text, re.S).group(1)
    tip = TipFile.parse(block)
    assert tip.kind == "strategy" and "`make test`" in tip.content
    assert load_hook_module().parse_tip(block)["content"] == tip.content
