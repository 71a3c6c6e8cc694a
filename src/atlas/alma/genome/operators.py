"""Operators over genomes: a random point of the space, mutation and crossover (no LLM), and the
observation fields an environment offers (what ``state_key`` / ``list_key`` parameters may name).

Every operator returns a valid genome: children are built, then validated; a draw that fails
validation is drawn again (bounded), so the search never spends an evaluation on an invalid point.
"""

from __future__ import annotations

import random
from typing import Any

from atlas.alma.genome.catalog import STORE_PARAMS, ObsKeys, Param, Part, part, parts
from atlas.alma.genome.model import Genome, PartUse, parse_genome
from atlas.errors import InvalidInputError
from atlas.protocols.env import Environment

MAX_TRIES = 50
KEY_FLOOR = 0.05  # the least weight a field (or "no field") gets when a key parameter is drawn
# A mutation's move, by weight: parts combine (a map is used by a walk, then by rules once the goal's item
# is held), so adding a retrieve part is as likely as retuning one.
MOVES = ("param", "param", "param", "add", "add", "add", "remove", "swap", "store", "render")
MAX_RETRIEVE = 4
# A part a mutation adds (and the encode parts it reads) starts at its catalog defaults this often, its
# observation fields those the genome already reads (else the likeliest); otherwise every parameter is
# drawn. Parts work together only with matching fields, and a default-configured part is the sensible
# first point. Measured: best probe 0.445 vs 0.411 with every parameter drawn, one seed of 256 candidates
# (``benchmarks/bench_screening.py --compare defaults``): not separated.
NEW_PART_DEFAULTS = 0.7


def observation_keys(observations: list[dict[str, Any]]) -> ObsKeys:
    """The fields of real observations by shape: scalar (text values, one state name; numbers are counts,
    not states: ``parts.common.state_of``) and list,
    each weighted by how much it looks like a state (values that recur, but not a constant) or like a
    list of states (items that are values of scalar fields), likeliest first."""
    values: dict[str, list[str]] = {}
    items: dict[str, list[str]] = {}
    for obs in observations:
        for key, value in (obs or {}).items():
            if str(key).startswith("_"):
                continue
            if isinstance(value, list):
                items.setdefault(key, []).extend(str(v) for v in value if isinstance(v, str | int))
            elif isinstance(value, str) and not value.strip().isdigit():  # a number names no state
                values.setdefault(key, []).append(value)
    weights: dict[str, float] = {}
    for key, vals in values.items():
        distinct = len(set(vals))
        weights[key] = 0.0 if distinct <= 1 else 1.0 - distinct / len(vals)
    states = {v for key, vals in values.items() if weights[key] > 0 for v in vals}
    for key, its in items.items():
        weights[key] = sum(1 for v in its if v in states) / len(its) if its else 0.0
    scalar = sorted(values, key=lambda k: -weights[k])
    listed = sorted(items, key=lambda k: -weights[k])
    return ObsKeys(scalar=scalar, lists=listed, weights={k: round(w, 4) for k, w in weights.items()})


def env_observation_keys(env: Environment, seed: int = 0) -> ObsKeys:
    """Observation fields of ``env``, read from one episode its explorer (or random valid actions) plays."""
    from atlas.envs.policies import ExplorerPolicy

    play = env.clone()
    task = play.generate_tasks(1, seed)[0]
    first = play.clone().reset(task)
    trajectory = ExplorerPolicy(seed).run(play, task)
    seen = [first] + [s.data for s in trajectory.steps if isinstance(s.data, dict)]
    return observation_keys(seen)


def _value(param: Param, rng: random.Random, keys: ObsKeys) -> Any:
    allowed = param.allowed(keys.as_dict())
    if not allowed:
        return param.default
    if param.kind in ("state_key", "list_key"):
        # a field, likelier ones more often; "" (no field) now and then
        weights = [KEY_FLOOR if not k else keys.weights.get(k, 0.0) + KEY_FLOOR for k in allowed]
        return rng.choices(allowed, weights=weights)[0]
    return rng.choice(allowed)


def _coherent(uses: list[PartUse], kind: str, value: str) -> None:
    """Every parameter of ``kind`` (state_key / list_key) in ``uses`` set to ``value``: parts that read
    the same environment should read the same field."""
    for use in uses:
        spec = part("encode", use.part) or part("retrieve", use.part)
        for p in spec.params if spec else ():
            if p.kind == kind and spec is not None and spec.generic:
                use.params[p.name] = value


def _random_use(spec: Part, rng: random.Random, keys: ObsKeys) -> PartUse:
    return PartUse(
        part=spec.name, params={p.name: _value(p, rng, keys) for p in spec.params if p.kind != "text"}
    )


def _default_use(spec: Part, keys: ObsKeys, reading: dict[str, str]) -> PartUse:
    """``spec`` at its defaults; an observation field is the one ``reading`` gives for its kind (what the
    genome's other parts read), else the likeliest field of the environment."""
    params: dict[str, Any] = {}
    for p in spec.params:
        if p.kind == "text":
            continue
        if p.kind in ("state_key", "list_key"):
            likeliest = ((keys.scalar if p.kind == "state_key" else keys.lists) or [""])[0]
            params[p.name] = reading.get(p.name) or reading.get(p.kind) or likeliest
        else:
            params[p.name] = p.default
    return PartUse(part=spec.name, params=params)


def _reading(uses: list[PartUse]) -> dict[str, str]:
    """The observation fields ``uses`` read: by parameter name, and by kind (the first of each)."""
    out: dict[str, str] = {}
    for use in uses:
        spec = part("encode", use.part) or part("retrieve", use.part)
        for p in spec.params if spec else ():
            value = use.params.get(p.name)
            if p.kind in ("state_key", "list_key") and value:
                out.setdefault(p.name, value)
                out.setdefault(p.kind, value)
    return out


def _new_use(spec: Part, rng: random.Random, keys: ObsKeys, genome: list[PartUse]) -> PartUse:
    """A part a mutation adds to ``genome``: at its defaults ``NEW_PART_DEFAULTS`` of the time."""
    if rng.random() < NEW_PART_DEFAULTS:
        return _default_use(spec, keys, _reading(genome))
    return _random_use(spec, rng, keys)


def _with_requirements(
    retrieve: list[PartUse], encode: list[PartUse], rng: random.Random, keys: ObsKeys
) -> list[PartUse]:
    """``encode`` plus the encode parts ``retrieve`` reads, each once (keeping ``encode``'s order and
    params); a new one as a mutation adds a part (``_new_use``)."""
    out = list(encode)
    have = {u.part for u in out}
    for use in retrieve:
        spec = part("retrieve", use.part)
        for need in spec.reads(use.params) if spec else ():
            if need not in have:
                enc = part("encode", need)
                assert enc is not None
                out.append(_new_use(enc, rng, keys, out + retrieve))
                have.add(need)
    return out


def _needed(retrieve: list[PartUse], encode: list[PartUse]) -> list[PartUse]:
    """Drop encode parts no retrieve part reads."""
    needed = {r for u in retrieve if (spec := part("retrieve", u.part)) for r in spec.reads(u.params)}
    return [u for u in encode if u.part in needed]


def _build(data: dict[str, Any]) -> Genome | None:
    try:
        return parse_genome(data, where="child")
    except InvalidInputError:
        return None


def random_genome(rng: random.Random, keys: ObsKeys, *, allow_llm: bool = False, name: str = "") -> Genome:
    """A random valid genome of generic parts (1 to ``MAX_RETRIEVE`` retrieve parts and what they read)."""
    for _ in range(MAX_TRIES):
        pool = [p for p in parts("retrieve", generic_only=True) if allow_llm or not _reads_llm(p)]
        chosen = rng.sample(pool, k=min(len(pool), rng.randint(1, MAX_RETRIEVE)))
        retrieve = [_random_use(p, rng, keys) for p in chosen]
        encode = _with_requirements(retrieve, [], rng, keys)
        for kind in ("state_key", "list_key"):
            _coherent(encode + retrieve, kind, _value(Param("k", kind, ""), rng, keys))
        render = _random_use(parts("render")[0], rng, keys)
        store = {sp.name: rng.choice(sp.choices) for sp in STORE_PARAMS}
        g = _build(
            {
                "name": name or "random",
                "encode": [u.model_dump() for u in encode],
                "store": store,
                "retrieve": [u.model_dump() for u in retrieve],
                "render": render.model_dump(),
            }
        )
        if g is not None:
            return g
    raise InvalidInputError("could not draw a valid random genome")  # pragma: no cover - the space is valid


def _reads_llm(spec: Part) -> bool:
    return any(getattr(part("encode", r), "uses_llm", False) for r in spec.requires)


def mutate(
    genome: Genome, rng: random.Random, keys: ObsKeys, *, allow_llm: bool = False, name: str = ""
) -> Genome:
    """One small change: a parameter, the store policy, the render, or a retrieve part added / removed /
    swapped (encode parts follow what the retrieve parts read)."""
    for _ in range(MAX_TRIES):
        data = genome.model_dump()
        retrieve = [PartUse(**u) for u in data["retrieve"]]
        encode = [PartUse(**u) for u in data["encode"]]
        move = rng.choice(MOVES)
        if move == "param":
            role, uses = rng.choice([("encode", encode), ("retrieve", retrieve)])
            tunable = [u for u in uses if [p for p in part(role, u.part).params if p.kind != "text"]]  # type: ignore[union-attr]
            if not tunable:
                continue
            use = rng.choice(tunable)
            spec = part(role, use.part)
            assert spec is not None
            param = rng.choice([p for p in spec.params if p.kind != "text"])
            use.params[param.name] = _value(param, rng, keys)
            if param.kind in ("state_key", "list_key") and rng.random() < 0.7:
                _coherent(encode + retrieve, param.kind, use.params[param.name])
        elif move == "add":
            have = {u.part for u in retrieve}
            pool = [
                p
                for p in parts("retrieve", generic_only=True)
                if p.name not in have and (allow_llm or not _reads_llm(p))
            ]
            if not pool or len(retrieve) >= MAX_RETRIEVE:
                continue
            retrieve.append(_new_use(rng.choice(pool), rng, keys, encode + retrieve))
        elif move == "remove":
            if len(retrieve) < 2:
                continue
            retrieve.pop(rng.randrange(len(retrieve)))
        elif move == "swap":
            if len(retrieve) < 2:
                continue
            i, j = rng.sample(range(len(retrieve)), 2)
            retrieve[i], retrieve[j] = retrieve[j], retrieve[i]
        elif move == "store":
            sp = rng.choice(STORE_PARAMS)
            data["store"][sp.name] = rng.choice(sp.choices)
        else:
            spec = parts("render")[0]
            param = rng.choice(list(spec.params))
            data["render"]["params"][param.name] = _value(param, rng, keys)
        encode = _needed(retrieve, _with_requirements(retrieve, encode, rng, keys))
        data.update(
            name=name or genome.name,
            encode=[u.model_dump() for u in encode],
            retrieve=[u.model_dump() for u in retrieve],
        )
        child = _build(data)
        if child is not None and child.key != genome.key:
            return child
    return random_genome(rng, keys, allow_llm=allow_llm, name=name)


def crossover(a: Genome, b: Genome, rng: random.Random, keys: ObsKeys, *, name: str = "") -> Genome:
    """A child with retrieve parts drawn from both parents (each parent's parameters kept), the encode
    parts they read (parameters from whichever parent had them), and one parent's store and render."""
    for _ in range(MAX_TRIES):
        pool = {u.part: u for u in b.retrieve} | {u.part: u for u in a.retrieve}
        names = list(pool)
        picked = rng.sample(names, k=rng.randint(1, min(MAX_RETRIEVE, len(names)))) if names else []
        retrieve = [pool[n].model_copy(deep=True) for n in picked]
        encoders = {u.part: u for u in (b.encode if rng.random() < 0.5 else a.encode)}
        for u in a.encode + b.encode:
            encoders.setdefault(u.part, u)
        encode = _needed(
            retrieve,
            _with_requirements(retrieve, [e.model_copy(deep=True) for e in encoders.values()], rng, keys),
        )
        donor = rng.choice([a, b])
        child = _build(
            {
                "name": name or f"{a.name}x{b.name}"[:80],
                "encode": [u.model_dump() for u in encode],
                "store": donor.store.model_dump(),
                "retrieve": [u.model_dump() for u in retrieve],
                "render": rng.choice([a, b]).render.model_dump(),
            }
        )
        if child is not None and child.key not in (a.key, b.key):
            return child
    return mutate(a, rng, keys, name=name)


__all__ = ["crossover", "env_observation_keys", "mutate", "observation_keys", "random_genome"]
