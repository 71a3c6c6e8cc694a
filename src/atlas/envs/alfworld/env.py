"""ALFWorld: household tasks in text, played through TextWorld with ALFWorld's own wrappers.

Two sources of games, one protocol:

* **real data** (``data_dir``: the layout ``alfworld-download`` produces, ``json_2.1.1/<split>/
  <task>/<trial>/game.tw-pddl``): the benchmark's splits ``train`` / ``valid_seen`` /
  ``valid_unseen``; family = the ALFRED floor plan.
* **generated** (default, offline): seeded households and goals of all six task types written as
  PDDL problems against ``alfworld/data/alfred.pddl`` with the ``alfred.twl2`` grammar, saved as
  ``game.tw-pddl`` files in a cache directory, and loaded with
  ``textworld.start(..., wrappers=[AlfredDemangler(), AlfredInfos])`` — the real ALFWorld engine.

30-step limit; one tool ``act(command)`` over the admissible commands. Score: success →
``max(0.5, 1 - steps/60)``, failure → 0.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
from importlib import resources
from pathlib import Path
from typing import Any

from atlas.core.types import Task
from atlas.envs.alfworld.households import (
    SCENE_KINDS,
    TASK_TYPES,
    build_household,
    build_task,
    kinds_supporting,
    normalize_task_type,
)
from atlas.envs.alfworld.pddl import gold_plan, problem_pddl
from atlas.envs.textgame import TextGameEnv
from atlas.envs.tw_speedups import install_parse_cache, install_translation_cache
from atlas.errors import ConfigError, EnvError
from atlas.infra.fs import cache_dir
from atlas.protocols.env import Action, StepResult

NAME = "alfworld"
SPLITS = {
    "train": "train",
    "valid_seen": "valid_seen",
    "valid_unseen": "valid_unseen",
    "eval_in_distribution": "valid_seen",
    "eval_out_of_distribution": "valid_unseen",
}
_TASK_RE = re.compile(r"Your task is to: (.*)$", re.MULTILINE)
START = "the middle of the room"
_ARRIVE = re.compile(r"You arrive at ([a-z]+ \d+)")
_TAKE = re.compile(r"You pick up the ([a-z]+ \d+) from")
_PUT = re.compile(r"You (?:move|put) the ([a-z]+ \d+) (?:to|in|on)")


def default_cache_dir() -> Path:
    return cache_dir(NAME)


def _require_packages() -> None:
    try:
        import alfworld  # noqa: F401
        import textworld  # noqa: F401
    except ImportError as e:
        raise ConfigError(
            "the ALFWorld environment needs the optional extra: pip install 'atlas-memory[alfworld]'"
        ) from e


def _domain_and_grammar() -> tuple[str, str]:
    data = resources.files("alfworld").joinpath("data")
    return data.joinpath("alfred.pddl").read_text(), data.joinpath("alfred.twl2").read_text()


class AlfWorldEnv(TextGameEnv):
    """ALFWorld episodes (see the module docstring). Parameters:

    ``data_dir`` / ``split`` (real data; also ``$ALFWORLD_DATA``), ``task_types`` (names or short
    aliases), ``scene_kinds`` (kitchen, livingroom, bedroom, bathroom), ``family_mode`` /
    ``family``, ``habit`` (probability an object lies in its household's usual receptacle),
    ``max_steps`` (30), ``cache_dir`` (generated game files).
    """

    name = NAME
    engine_kind = "alfworld"

    def __init__(
        self,
        *,
        data_dir: str | Path | None = None,
        split: str = "train",
        task_types: list[str] | tuple[str, ...] | None = None,
        scene_kinds: list[str] | tuple[str, ...] | None = None,
        family_mode: bool = True,
        family: int | None = None,
        habit: float = 0.5,
        max_steps: int = 30,
        cache_dir: str | Path | None = None,
        count_invalid: bool = True,
        use_env_data: bool = True,
    ) -> None:
        super().__init__(max_steps=max_steps, count_invalid=count_invalid)
        env_data = os.environ.get("ALFWORLD_DATA")  # the alfworld package sets a default on import
        if data_dir is None and use_env_data and env_data and (Path(env_data) / "json_2.1.1").is_dir():
            data_dir = env_data
        self.data_dir = Path(data_dir).expanduser() if data_dir else None
        if split not in SPLITS:
            raise ConfigError(f"unknown ALFWorld split {split!r}; known: {', '.join(SPLITS)}")
        self.split = SPLITS[split]
        self.task_types = tuple(normalize_task_type(t) for t in (task_types or TASK_TYPES))
        kinds = tuple(scene_kinds or SCENE_KINDS)
        unknown = set(kinds) - set(SCENE_KINDS)
        if unknown:
            raise ConfigError(f"unknown household kind(s) {sorted(unknown)}; known: {', '.join(SCENE_KINDS)}")
        self.scene_kinds = kinds
        self.family_mode = family_mode
        self.family = family
        self.habit = habit
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
        self._gold: list[str] | None = None
        self._games: list[dict[str, Any]] | None = None

    def clone(self) -> AlfWorldEnv:
        return AlfWorldEnv(
            data_dir=self.data_dir,
            split=self.split,
            task_types=self.task_types,
            scene_kinds=self.scene_kinds,
            family_mode=self.family_mode,
            family=self.family,
            habit=self.habit,
            max_steps=self.max_steps,
            cache_dir=self.cache_dir,
            count_invalid=self.count_invalid,
            use_env_data=False,
        )

    @property
    def mode(self) -> str:
        return "data" if self.data_dir else "generated"

    # --- tasks: generated ----------------------------------------------------------------------

    def _generated_task(self, seed: int, family: int) -> Task:
        kinds = kinds_supporting(self.task_types, self.scene_kinds)
        household = build_household(family, kinds)
        spec = build_task(household, seed=seed, task_types=self.task_types, habit=self.habit)
        return Task(
            id=f"{NAME}-f{family}-s{seed}",
            description=spec.goal_text,
            domain=NAME,
            metadata={
                "env": NAME,
                "mode": "generated",
                "seed": seed,
                "family": family,
                "task_type": spec.task_type,
                "household": household.kind,
                "params": {
                    "task_types": list(self.task_types),
                    "scene_kinds": list(self.scene_kinds),
                    "habit": self.habit,
                },
            },
        )

    def generate_tasks(self, n: int, seed: int) -> list[Task]:
        """``n`` tasks, seeds ``seed, seed+1, …``; in family mode one household
        (``self.family`` or ``seed``), otherwise each task its own household."""
        if self.data_dir:
            return self._data_tasks(n, seed, family=self.family if self.family_mode else None)
        if not self.family_mode:
            return [self._generated_task(seed + i, seed + i) for i in range(n)]
        family = self.family if self.family is not None else seed
        return self.generate_family_tasks(n, family, seed)

    def generate_family_tasks(self, n: int, family: int, seed: int) -> list[Task]:
        if self.data_dir:
            return self._data_tasks(n, seed, family=family)
        return [self._generated_task(seed + i, family) for i in range(n)]

    def _write_generated(self, task: Task) -> tuple[Path, list[str]]:
        meta = task.metadata
        params = meta.get("params", {})
        task_types = tuple(params.get("task_types", self.task_types))
        kinds = kinds_supporting(task_types, tuple(params.get("scene_kinds", self.scene_kinds)))
        household = build_household(int(meta["family"]), kinds)
        spec = build_task(
            household,
            seed=int(meta["seed"]),
            task_types=task_types,
            habit=float(params.get("habit", self.habit)),
        )
        domain, grammar = _domain_and_grammar()
        problem = problem_pddl(household, spec, f"atlas_f{meta['family']}_s{meta['seed']}")
        plan = gold_plan(household, spec)
        game = {
            "pddl_domain": domain,
            "grammar": grammar.replace("UNKNOWN GOAL", spec.goal_text),
            "pddl_problem": problem,
            "walkthrough": plan,
            "solvable": True,
        }
        blob = json.dumps(game, sort_keys=True)
        digest = hashlib.sha256(blob.encode()).hexdigest()[:16]
        path = self.cache_dir / "games" / f"{task.id}-{digest}.tw-pddl"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(blob)
            tmp.replace(path)
        return path, plan

    # --- tasks: real data ----------------------------------------------------------------------

    def _scan(self) -> list[dict[str, Any]]:
        if self._games is not None:
            return self._games
        assert self.data_dir is not None
        root = self.data_dir / "json_2.1.1" / self.split
        if not root.is_dir():
            raise EnvError(
                f"ALFWorld data not found: {root} (expected the layout alfworld-download produces: "
                "DATA/json_2.1.1/{train,valid_seen,valid_unseen}/<task>/<trial>/game.tw-pddl)"
            )
        games = []
        for game_file in sorted(root.glob("*/*/game.tw-pddl")):
            task_dir = game_file.parent.parent.name  # e.g. pick_and_place_simple-Mug-None-Desk-308
            task_type = task_dir.split("-", 1)[0]
            if task_type not in self.task_types:
                continue
            try:
                data = json.loads(game_file.read_text())
            except (OSError, json.JSONDecodeError) as e:
                raise EnvError(f"unreadable ALFWorld game file {game_file}") from e
            if not data.get("solvable", True):
                continue
            m = _TASK_RE.search(data.get("grammar", "").replace("\\n", "\n"))
            goal = m.group(1).strip().rstrip('".').strip() if m else task_dir
            floor = task_dir.rsplit("-", 1)[-1]
            games.append(
                {
                    "path": str(game_file),
                    "task_type": task_type,
                    "goal": goal,
                    "family": int(floor) if floor.isdigit() else 0,
                    "id": f"{NAME}-{self.split}-{task_dir}-{game_file.parent.name}",
                }
            )
        if not games:
            raise EnvError(f"no solvable ALFWorld games of types {list(self.task_types)} under {root}")
        self._games = games
        return games

    def _data_tasks(self, n: int, seed: int, family: int | None) -> list[Task]:
        games = self._scan()
        if family is not None:
            same = [g for g in games if g["family"] == family]
            if same:
                games = same
            else:  # family seeds are arbitrary ints: map onto an existing floor plan
                floors = sorted({g["family"] for g in games})
                games = [g for g in games if g["family"] == floors[family % len(floors)]]
        order = list(range(len(games)))
        random.Random(f"alfworld/data/{seed}").shuffle(order)
        picked = [games[order[i % len(order)]] for i in range(n)]
        return [
            Task(
                id=g["id"],
                description=g["goal"],
                domain=NAME,
                metadata={
                    "env": NAME,
                    "mode": "data",
                    "gamefile": g["path"],
                    "task_type": g["task_type"],
                    "family": g["family"],
                    "seed": seed + i,
                    "split": self.split,
                },
            )
            for i, g in enumerate(picked)
        ]

    # --- episode -------------------------------------------------------------------------------

    def _load(self, task: Task, engine: Any | None) -> Any:
        _require_packages()
        import textworld
        from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos

        install_parse_cache()
        install_translation_cache()
        meta = task.metadata
        if meta.get("mode") == "data":
            path = Path(meta["gamefile"])
            data = json.loads(path.read_text())
            self._gold = list(data["walkthrough"]) if data.get("walkthrough") else None
        elif "seed" in meta and "family" in meta:
            path, self._gold = self._write_generated(task)
        else:
            raise EnvError(
                f"task {task.id!r} is not an ALFWorld task (metadata needs seed/family or gamefile)"
            )
        if engine is None:
            infos = textworld.EnvInfos(admissible_commands=True, won=True, extras=["gamefile"])
            engine = textworld.start(
                str(path), request_infos=infos, wrappers=[AlfredDemangler(), AlfredInfos]
            )
        else:
            engine.load(str(path))
        return engine

    def _clean(self, text: str) -> str:
        return text.replace("-= Welcome to TextWorld, ALFRED! =-", "").strip()

    # --- where the player is and what it holds: read from what the game printed ---------------

    def reset(self, task: Task) -> dict[str, Any]:
        self._location: str = START
        self._inventory: list[str] = []
        return super().reset(task)

    def step(self, action: Action) -> StepResult:
        result = super().step(action)
        if result.error is None and result.counted:
            self._track(self._text)
            result.observation.update(self._where())
        return result

    def _track(self, text: str) -> None:
        if m := _ARRIVE.search(text):
            self._location = m.group(1)
        if m := _TAKE.search(text):
            self._inventory.append(m.group(1))
        elif (m := _PUT.search(text)) and m.group(1) in self._inventory:
            self._inventory.remove(m.group(1))

    def _where(self) -> dict[str, Any]:
        return {
            "location": getattr(self, "_location", START),
            "inventory": list(getattr(self, "_inventory", [])),
        }

    def observe(self) -> dict[str, Any]:
        return {**super().observe(), **self._where()}

    def summarize_observation(self, observation: dict[str, Any]) -> str:
        """The game's text, then where the player is and what it carries (both printed by the game
        before: "You arrive at ...", "You pick up ..."), then the admissible commands."""
        carry = ", ".join(observation.get("inventory") or []) or "nothing"
        where = f"\nYou are at {observation.get('location', START)}. You carry: {carry}."
        text = observation.get("text", "")
        return super().summarize_observation({**observation, "text": text + where})

    def gold_plan(self) -> list[str] | None:
        return list(self._gold) if self._gold is not None else None

    def learnable_advice(self, task: Task) -> str:
        """The household's habits for the goal's object (and the lamp): where it is usually found,
        which a memory of earlier games in this household could know. Real ALFWorld data has no
        such family structure: nothing."""
        from atlas.envs.alfworld.oracle import household_advice

        return household_advice(task, self.task_types, self.scene_kinds, self.habit)

    def seed_design(self) -> str:
        return resources.files("atlas.envs.alfworld").joinpath("design_seed.py").read_text()

    def context_schema(self) -> dict[str, Any]:
        from atlas.envs.alfworld.schema import context_schema

        return context_schema(self)


__all__ = ["NAME", "AlfWorldEnv", "default_cache_dir"]
