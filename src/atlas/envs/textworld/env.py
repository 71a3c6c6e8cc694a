"""TextWorld: games generated offline from TextWorld's challenges, played through the same
``act(command)`` protocol as ALFWorld (optional extra ``atlas-memory[textworld]``).

Challenges: ``tw-treasure_hunter`` (levels 1–30), ``tw-coin_collector`` (1–300) and
``tw-cooking`` (levels 1–4 mapped to recipe/take/go/open/cook/cut skills). A task is a seed
set: in family mode the *map* seed is the family and the objects/quest/grammar seeds come from
the task, so tasks of a family share the map. Games are compiled on first use into a cache
directory (``textworld`` in ATLAS's cache, ``atlas.infra.fs.cache_dir``), never the repo.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import threading
from importlib import resources
from pathlib import Path
from typing import Any

from atlas.core.types import Task
from atlas.envs.textgame import TextGameEnv
from atlas.envs.textworld import fetch
from atlas.envs.textworld.explorer import ROOM
from atlas.errors import ConfigError, EnvError
from atlas.infra.fs import cache_dir

NAME = "textworld"
CHALLENGES = {
    "tw-treasure_hunter": (
        "Follow the instructions printed at the start of the game to find the right object and take it.",
        30,
    ),
    "tw-coin_collector": ("Find the coin and take it.", 300),
    "tw-cooking": (
        "Find the cookbook, gather and prepare the ingredients it lists, then prepare and eat the meal.",
        4,
    ),
    fetch.CHALLENGE: (fetch.GOAL, fetch.MAX_ROOMS),
}
ALIASES = {
    "treasure_hunter": "tw-treasure_hunter",
    "coin_collector": "tw-coin_collector",
    "cooking": "tw-cooking",
    "fetch": fetch.CHALLENGE,
}
DEFAULT_LEVEL = {fetch.CHALLENGE: 12}  # fetch: rooms in the house
DEFAULT_MAX_STEPS = {fetch.CHALLENGE: 30}
COOKING_LEVELS = {
    1: {"recipe": 1, "take": 1, "go": 1, "open": False, "cook": False, "cut": False},
    2: {"recipe": 1, "take": 1, "go": 6, "open": True, "cook": False, "cut": False},
    3: {"recipe": 2, "take": 2, "go": 6, "open": True, "cook": True, "cut": False},
    4: {"recipe": 3, "take": 3, "go": 9, "open": True, "cook": True, "cut": True},
}
_compile_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def default_cache_dir() -> Path:
    return cache_dir(NAME)


def _settings(challenge: str, level: int, seed: int) -> dict[str, Any]:
    if challenge == "tw-cooking":
        return {**COOKING_LEVELS[level], "drop": False, "recipe_seed": 0, "split": "train"}
    return {"level": level}


def _things(meta: dict[str, Any]) -> int:
    """A fetch task's household size; tasks written before houses owned fewer things owned all."""
    return int(meta.get("things", fetch.LEGACY_THINGS))


class TextWorldEnv(TextGameEnv):
    """Parameters: ``challenge`` (name or alias), ``level`` (default 5; for ``fetch`` the rooms, 12),
    ``family_mode`` / ``family``, ``max_steps`` (50; ``fetch`` 30), ``habit`` (``fetch``: how often
    an object lies in its usual room, 1.0), ``things`` (``fetch``: how many things a household owns,
    4), ``cache_dir``."""

    name = NAME
    engine_kind = "textworld"

    def __init__(
        self,
        *,
        challenge: str = "tw-treasure_hunter",
        level: int | None = None,
        family_mode: bool = True,
        family: int | None = None,
        max_steps: int | None = None,
        habit: float = fetch.HABIT,
        things: int = fetch.THINGS,
        cache_dir: str | Path | None = None,
        count_invalid: bool = True,
    ) -> None:
        challenge = ALIASES.get(challenge, challenge)
        if challenge not in CHALLENGES:
            known = ", ".join([*CHALLENGES, *ALIASES])
            raise ConfigError(f"unknown TextWorld challenge {challenge!r}; known: {known}")
        super().__init__(
            max_steps=max_steps or DEFAULT_MAX_STEPS.get(challenge, 50), count_invalid=count_invalid
        )
        level = level if level is not None else DEFAULT_LEVEL.get(challenge, 5)
        low = 3 if challenge == fetch.CHALLENGE else 1
        top = CHALLENGES[challenge][1]
        if not low <= level <= top:
            raise ConfigError(f"{challenge} levels are {low}..{top}, got {level}")
        if not 0.0 <= habit <= 1.0:
            raise ConfigError(f"habit is a probability in [0, 1], got {habit}")
        if not 1 <= things <= len(fetch.OBJECTS):
            raise ConfigError(f"a fetch house owns 1..{len(fetch.OBJECTS)} things, got {things}")
        self.challenge = challenge
        self.level = level
        self.family_mode = family_mode
        self.family = family
        self.habit = habit
        self.things = things
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
        self._gold: list[str] | None = None

    def clone(self) -> TextWorldEnv:
        return TextWorldEnv(
            challenge=self.challenge,
            level=self.level,
            family_mode=self.family_mode,
            family=self.family,
            max_steps=self.max_steps,
            habit=self.habit,
            things=self.things,
            cache_dir=self.cache_dir,
            count_invalid=self.count_invalid,
        )

    # --- tasks ---------------------------------------------------------------------------------

    def _make_task(self, seed: int, family: int) -> Task:
        metadata: dict[str, Any] = {
            "env": NAME,
            "challenge": self.challenge,
            "level": self.level,
            "seed": seed,
            "family": family,
        }
        description = CHALLENGES[self.challenge][0]
        if self.challenge == fetch.CHALLENGE:
            metadata["habit"], metadata["things"] = self.habit, self.things
            description = fetch.errand(fetch.house(family, self.level, self.things), seed, self.habit).goal
        return Task(
            id=f"{NAME}-{self.challenge}-l{self.level}-f{family}-s{seed}",
            description=description,
            domain=NAME,
            metadata=metadata,
        )

    def generate_tasks(self, n: int, seed: int) -> list[Task]:
        if not self.family_mode:
            return [self._make_task(seed + i, seed + i) for i in range(n)]
        family = self.family if self.family is not None else seed
        return self.generate_family_tasks(n, family, seed)

    def generate_family_tasks(self, n: int, family: int, seed: int) -> list[Task]:
        return [self._make_task(seed + i, family) for i in range(n)]

    # --- games ---------------------------------------------------------------------------------

    def game_path(self, task: Task) -> Path:
        """The compiled game of ``task`` (compiled on first use, then cached)."""
        meta = task.metadata
        try:
            challenge, level = meta["challenge"], int(meta["level"])
            seed, family = int(meta["seed"]), int(meta["family"])
        except KeyError as e:
            raise EnvError(f"task {task.id!r} is not a TextWorld task (metadata lacks {e})") from e
        habit, things = float(meta.get("habit", self.habit)), _things(meta)
        owns = "" if things == fetch.LEGACY_THINGS else f"-t{things}"
        tag = f"-h{habit:g}{owns}-v{fetch.VERSION}" if challenge == fetch.CHALLENGE else ""
        path = self.cache_dir / f"{challenge}-l{level}-f{family}-s{seed}{tag}.z8"
        with _locks_guard:
            lock = _compile_locks.setdefault(str(path), threading.Lock())
        with lock:
            if path.exists() and path.with_suffix(".json").exists():
                return path
            try:
                import textworld
                from textworld.challenges import CHALLENGES as TW_CHALLENGES
            except ImportError as e:
                raise ConfigError(
                    "the TextWorld environment needs: pip install 'atlas-memory[textworld]'"
                ) from e
            options = textworld.GameOptions()
            options.seeds = {"map": family, "objects": seed, "quest": seed + 7919, "grammar": seed + 104729}
            if challenge == fetch.CHALLENGE:
                game = fetch.make_game(family, seed, level, habit, options, things)
            else:
                game = TW_CHALLENGES[challenge][1](_settings(challenge, level, seed), options)
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=self.cache_dir) as tmp:
                options.path = str(Path(tmp) / path.name)
                options.force_recompile = True
                built = Path(textworld.generator.compile_game(game, options))
                shutil.move(str(built.with_suffix(".json")), path.with_suffix(".json"))
                shutil.move(str(built), path)
        return path

    def _load(self, task: Task, engine: Any | None) -> Any:
        import textworld

        path = self.game_path(task)
        if engine is not None:
            engine.close()
        infos = textworld.EnvInfos(admissible_commands=True, won=True, lost=True, extras=["walkthrough"])
        engine = textworld.start(str(path), request_infos=infos)
        self._gold = None
        return engine

    def reset(self, task: Task) -> dict[str, Any]:
        self._location = ""
        obs = super().reset(task)
        walk = self._state.get("extra.walkthrough")
        self._gold = list(walk) if walk else None
        return obs

    def observe(self) -> dict[str, Any]:
        """The game's observation plus ``location``: the room whose ``-= Name =-`` header the game
        printed last (what the player has read, nothing more)."""
        if m := ROOM.search(self._text or ""):
            self._location = m.group(1).lower()
        return {**super().observe(), "location": getattr(self, "_location", "")}

    def step(self, action):
        result = super().step(action)
        if self._state is not None and self._state.get("lost") and not self._done:
            self._done = True
            result.done = True
            result.observation = self.observe()
        return result

    def _clean(self, text: str) -> str:
        """Drop TextWorld's ASCII-art banner (lines made mostly of _ | \\ / $) and blank runs."""
        kept = []
        for line in text.splitlines():
            letters = sum(c.isalpha() for c in line)
            art = sum(c in "_|\\/$" for c in line)
            if art > letters:
                continue
            kept.append(line.rstrip())
        return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()

    def gold_plan(self) -> list[str] | None:
        return list(self._gold) if self._gold is not None else None

    def learnable_advice(self, task: Task) -> str:
        """``fetch``: where the object usually lies in this house and the way there. The other
        challenges share nothing a memory could carry between games: nothing."""
        m = task.metadata
        if m.get("challenge") != fetch.CHALLENGE:
            return ""
        return fetch.learnable_advice(
            int(m["family"]), int(m["seed"]), int(m["level"]), float(m["habit"]), _things(m)
        )

    def seed_design(self) -> str:
        return resources.files("atlas.envs.textworld").joinpath("design_seed.py").read_text()

    def context_schema(self) -> dict[str, Any]:
        from atlas.envs.textgame_schema import text_game_schema

        return text_game_schema(
            self,
            summary=(
                f"TextWorld {self.challenge} games (level {self.level}): rooms joined by exits, objects, "
                "containers and doors; the first observation states the objective. Tasks of a family share "
                f"the map; objects and quest change. {self.max_steps} commands max; score "
                f"max(0.5, 1 - steps/{self.score_horizon}) on success, 0 otherwise."
            ),
            goal_hint=self._goal_hint(),
            extra_keys={
                "location": "str — the room the game last named in a '-= Room =-' header ('' before any)"
            },
        )

    def _goal_hint(self) -> str:
        if self.challenge == fetch.CHALLENGE:
            return "'Find the OBJECT and take it.' — tasks of a family share the house and where things usually lie"
        return (
            f"always '{CHALLENGES[self.challenge][0]}' — the specific objective is in the first observation"
        )


__all__ = ["CHALLENGES", "NAME", "TextWorldEnv", "default_cache_dir"]
