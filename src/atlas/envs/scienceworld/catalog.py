"""ScienceWorld's task types and the benchmark's own variation splits.

Each task type has variations 0..N-1, split by the benchmark into contiguous train / dev / test
ranges (``(train, dev, total)`` below, as ``ScienceWorldEnv.get_variations_*`` return them in
``scienceworld`` 1.2.3; ``tests/envs/test_scienceworld.py`` checks them against the simulator).
"""

from __future__ import annotations

import random

from atlas.errors import ConfigError

#: (train variations, dev variations, all variations) per task type.
SPLIT_SIZES: dict[str, tuple[int, int, int]] = {
    "boil": (14, 7, 30),
    "change-the-state-of-matter-of": (14, 7, 30),
    "chemistry-mix": (16, 8, 32),
    "chemistry-mix-paint-secondary-color": (18, 9, 36),
    "chemistry-mix-paint-tertiary-color": (18, 9, 36),
    "find-animal": (150, 75, 300),
    "find-living-thing": (150, 75, 300),
    "find-non-living-thing": (150, 75, 300),
    "find-plant": (150, 75, 300),
    "freeze": (14, 7, 30),
    "grow-fruit": (62, 31, 126),
    "grow-plant": (62, 31, 126),
    "identify-life-stages-1": (6, 3, 14),
    "identify-life-stages-2": (4, 2, 10),
    "inclined-plane-determine-angle": (84, 42, 168),
    "inclined-plane-friction-named-surfaces": (692, 346, 1386),
    "inclined-plane-friction-unnamed-surfaces": (80, 40, 162),
    "lifespan-longest-lived": (62, 31, 125),
    "lifespan-longest-lived-then-shortest-lived": (62, 31, 125),
    "lifespan-shortest-lived": (62, 31, 125),
    "measure-melting-point-known-substance": (218, 109, 436),
    "measure-melting-point-unknown-substance": (150, 75, 300),
    "melt": (14, 7, 30),
    "mendelian-genetics-known-plant": (60, 30, 120),
    "mendelian-genetics-unknown-plant": (240, 120, 480),
    "power-component": (10, 5, 20),
    "power-component-renewable-vs-nonrenewable-energy": (10, 5, 20),
    "test-conductivity": (450, 225, 900),
    "test-conductivity-of-unknown-substances": (300, 150, 600),
    "use-thermometer": (270, 135, 540),
}

#: Task types whose gold paths the short action list is measured to carry (see
#: ``benchmarks/bench_scienceworld_actions.py``); the others load, but their list may miss steps.
SUPPORTED: tuple[str, ...] = (
    "find-living-thing",
    "find-animal",
    "find-plant",
    "find-non-living-thing",
    "lifespan-longest-lived",
    "lifespan-shortest-lived",
    "lifespan-longest-lived-then-shortest-lived",
    "use-thermometer",
)
DEFAULT_TASK_TYPE = "find-living-thing"
SPLITS = ("train", "dev", "test")


def task_types(spec: str | list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """``spec`` (one name, a comma list or a sequence) as known task-type names, in order."""
    if spec is None:
        return (DEFAULT_TASK_TYPE,)
    names = spec.split(",") if isinstance(spec, str) else list(spec)
    out: list[str] = []
    for raw in names:
        name = raw.strip().lower().replace("_", "-")
        if not name:
            continue
        if name not in SPLIT_SIZES:
            raise ConfigError(
                f"unknown ScienceWorld task type {raw.strip()!r}; known: {', '.join(sorted(SPLIT_SIZES))}"
            )
        if name not in out:
            out.append(name)
    if not out:
        raise ConfigError("--task-type names no ScienceWorld task type")
    return tuple(out)


def variations(task_type: str, split: str) -> range:
    """The benchmark's variations of ``task_type`` in ``split``."""
    if split not in SPLITS:
        raise ConfigError(f"ScienceWorld splits are {', '.join(SPLITS)}, got {split!r}")
    train, dev, total = SPLIT_SIZES[task_type]
    return {"train": range(0, train), "dev": range(train, train + dev), "test": range(train + dev, total)}[
        split
    ]


def split_of(task_type: str, variation: int) -> str:
    """Which split ``variation`` of ``task_type`` belongs to."""
    for split in SPLITS:
        if variation in variations(task_type, split):
            return split
    raise ConfigError(f"{task_type} has no variation {variation}")


def pick(task_types_: tuple[str, ...], split: str, n: int, seed: int) -> list[tuple[str, int]]:
    """``n`` (task type, variation) pairs of ``split``, spread round-robin over the task types, each
    type's variations in an order ``seed`` shuffles; never a repeat while a split has unused ones
    (then it cycles)."""
    if n < 0:
        raise ConfigError(f"cannot make {n} tasks")
    orders = {}
    for t in task_types_:
        order = list(variations(t, split))
        random.Random(f"scienceworld/{t}/{split}/{seed}").shuffle(order)
        orders[t] = order
    out: list[tuple[str, int]] = []
    longest = max(len(o) for o in orders.values())
    k = 0
    while len(out) < n:  # round k takes each type's k-th variation; a type out of them sits out
        for t in task_types_:
            order = orders[t]
            if k % longest < len(order) and len(out) < n:
                out.append((t, order[k % longest]))
        k += 1
    return out


__all__ = [
    "DEFAULT_TASK_TYPE",
    "SPLITS",
    "SPLIT_SIZES",
    "SUPPORTED",
    "pick",
    "split_of",
    "task_types",
    "variations",
]
