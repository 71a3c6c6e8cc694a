"""The local LLM as a genome operator: it proposes an edited genome under grammar-constrained decoding
(the reply is JSON valid for the space's schema: only known parts, allowed parameter values), with the
parents' genomes, scores and Analysis in view. A reply that still cannot be used falls back to
mutation; the caller records which happened.
"""

from __future__ import annotations

import json
import random
from typing import Any

from atlas.alma.genome.catalog import STORE_PARAMS, ObsKeys, Part, Role, parts
from atlas.alma.genome.model import Genome, PartUse, parse_genome
from atlas.alma.genome.operators import _needed, _with_requirements
from atlas.errors import AtlasError, InvalidInputError
from atlas.protocols.llm import LLM


def _part_schema(spec: Part, keys: ObsKeys) -> dict[str, Any]:
    props = {}
    for p in spec.params:
        allowed = p.allowed(keys.as_dict())
        if p.kind != "text" and allowed:
            props[p.name] = {"enum": allowed}
    return {
        "type": "object",
        "properties": {
            "part": {"const": spec.name},
            "params": {"type": "object", "properties": props, "additionalProperties": False},
        },
        "required": ["part", "params"],
        "additionalProperties": False,
    }


def genome_schema(keys: ObsKeys) -> dict[str, Any]:
    """The JSON schema of generic genomes for an environment with observation fields ``keys``."""

    def role(name: str) -> dict[str, Any]:
        return {"anyOf": [_part_schema(p, keys) for p in parts(name, generic_only=True)]}  # type: ignore[arg-type]

    return {
        "type": "object",
        "properties": {
            "retrieve": {"type": "array", "items": role("retrieve"), "minItems": 1, "maxItems": 4},
            "encode": {"type": "array", "items": role("encode"), "maxItems": 5},
            "store": {
                "type": "object",
                "properties": {sp.name: {"enum": list(sp.choices)} for sp in STORE_PARAMS},
                "additionalProperties": False,
            },
            "render": _part_schema(parts("render")[0], keys),
        },
        "required": ["retrieve", "encode", "render"],
        "additionalProperties": False,
    }


def catalog_text(keys: ObsKeys) -> str:
    """The parts and their allowed parameter values, for the prompt (the grammar is not shown to the model)."""
    lines = []
    roles: tuple[Role, ...] = ("encode", "retrieve", "render")
    for role in roles:
        lines.append(f"{role} parts:")
        for p in parts(role, generic_only=True):
            params = "; ".join(
                f"{q.name} in {q.allowed(keys.as_dict())}" for q in p.params if q.kind != "text"
            )
            needs = f" (needs encode {', '.join(p.requires)})" if p.requires else ""
            needs += "".join(f" (with {n}={v} also {e})" for n, v, e in p.requires_if)
            lines.append(f"- {p.name}{needs}: {p.summary}" + (f" [{params}]" if params else ""))
    lines.append("store: " + "; ".join(f"{sp.name} in {list(sp.choices)}: {sp.doc}" for sp in STORE_PARAMS))
    return "\n".join(lines)


PROMPT = """You improve memory designs for an agent. A design is a genome: JSON that picks memory parts.
The agent acts on advice lines "<situation>: <action>" and plans "Plan: a, b, c".

{catalog}

Parent genomes, best first, with their score over no memory and what happened:
{parents}

Reply with one new genome as JSON (keys: encode, store, retrieve, render) that should score higher:
change one or two things in the best parent, guided by what happened. Every retrieve part needs its encode part."""


def _brief(g: Genome, score: float | None, analysis: str) -> str:
    shown = "n/a" if score is None else f"{score:+.3f}"
    body = json.dumps(
        {k: v for k, v in g.model_dump().items() if k in ("encode", "store", "retrieve", "render")}
    )
    return f"score {shown}\n{body}\nWhat happened:\n{analysis[:1200]}"


async def llm_edit(
    llm: LLM,
    parents: list[tuple[Genome, float | None, str]],
    keys: ObsKeys,
    rng: random.Random,
    *,
    name: str = "",
    max_tokens: int = 700,
) -> tuple[Genome | None, str]:
    """``(genome, "")`` from the model, or ``(None, why)`` when its reply cannot be used."""
    prompt = PROMPT.format(catalog=catalog_text(keys), parents="\n\n".join(_brief(*p) for p in parents))
    try:
        completion = await llm.acomplete(
            [{"role": "user", "content": prompt}],
            json_schema=genome_schema(keys),
            temperature=0.8,
            max_tokens=max_tokens,
        )
    except AtlasError as exc:
        return None, f"the model failed: {exc}"
    try:
        # the grammar ends the object where the schema does; a local model may still run on after it
        data, _ = json.JSONDecoder().raw_decode(completion.text.lstrip())
    except json.JSONDecodeError as exc:
        return None, f"reply is not JSON ({exc.msg}): {completion.text[:200]!r}"
    if not isinstance(data, dict):
        return None, "reply is not a JSON object"
    try:
        retrieve = [PartUse.model_validate(u) for u in data.get("retrieve") or []]
        encode = [PartUse.model_validate(u) for u in data.get("encode") or []]
        seen: set[str] = set()
        retrieve = [u for u in retrieve if not (u.part in seen or seen.add(u.part))]  # type: ignore[func-returns-value]
        seen = set()
        encode = [u for u in encode if not (u.part in seen or seen.add(u.part))]  # type: ignore[func-returns-value]
        encode = _needed(
            retrieve, _with_requirements(retrieve, encode, rng, keys)
        )  # repair: what retrieve reads
        genome = parse_genome(
            {
                "name": name or "llm_edit",
                "encode": [u.model_dump() for u in encode],
                "store": data.get("store") or {},
                "retrieve": [u.model_dump() for u in retrieve],
                "render": data.get("render") or {"part": "lines"},
            },
            where="the model's genome",
        )
    except (InvalidInputError, ValueError) as exc:
        return None, str(exc)[:300]
    if parents and genome.key == parents[0][0].key:
        return None, "the model returned its parent unchanged"
    return genome, ""


__all__ = ["catalog_text", "genome_schema", "llm_edit"]
