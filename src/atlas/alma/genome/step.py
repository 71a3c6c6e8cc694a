"""The genome search's screening: an operator's candidate children, each screened with the advice probe
(no LLM: memory built from the no-memory task agent's logged collection games — or from walks, where
there are none — then deployment tasks played doing only what the advice says), and rounds of mutations
of the best until the budget is spent.

Cheap first: a candidate costs seconds of probe. ``atlas.alma.search.genome_step`` checks the best few
with the task agent's own collection games and plays one only when its probe beats that of the best
design played so far (``probe_bar``).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from atlas.alma.author.advice_probe import progress_of
from atlas.alma.design import Design
from atlas.alma.genome.catalog import ObsKeys
from atlas.alma.genome.compile import compile_genome, genome_design, genome_of
from atlas.alma.genome.llm_edit import llm_edit
from atlas.alma.genome.model import Genome, parse_genome
from atlas.alma.genome.operators import crossover, mutate, random_genome
from atlas.alma.genome.screening_report import screening_line
from atlas.alma.state.archive import ArchiveEntry
from atlas.errors import InvalidInputError
from atlas.protocols.embed import Embedder
from atlas.protocols.env import Environment
from atlas.protocols.llm import LLM

if TYPE_CHECKING:
    from atlas.alma.sandbox.pool import WorkerPool

PROBE_FIRST = 2  # probe tasks every candidate plays; the rest only after it solved or scored one
# While no candidate of a screening has scored, every candidate plays every probe task: where memory
# helps only tasks that start where its collection looked, two tasks see nothing. Evidence: on the
# ScienceWorld run's tasks (docs/results/history/search-scienceworld-longest-0.5b.tar.xz), 32 mutations of
# trajectory_retrieval, 8 probed above 0 playing every task and none two first (2.4x the time;
# ``benchmarks/bench_screening.py --compare probe-first``).
PROBE_ALL_WHILE_FLAT = True
ROUND_LINE_S = 60.0  # a screening says how far it got at most this often
ROUND_SIZE = 8  # candidates per screening round: the operator's children first, then mutations of the best
PARENTS_PER_ROUND = 4  # the best-steered candidates a round mutates
# A climbing child gets another change with this probability, and again (1 + geometric changes): some
# gains need two at once. On TextWorld fetch `goal_rules` learns a take from any episode only with both
# `goal_actions(any_item=true)` and `min_support=1`; each alone screens as neither does (0.38 vs 0.47 with
# both), and 246 one-change candidates never made both.
EXTRA_CHANGE = 0.5
# Every EXPLORE_EVERY-th child of a climbing round is a random genome even once a candidate's probe has
# scored (before that, every other one is): the climb from the first genome that scores can stay in its
# basin for a whole generation (0: no random genome then). Evidence: docs/results/bench-screening-explore
# (``benchmarks/bench_screening.py --compare explore``, 256 candidates from trajectory_retrieval's genome
# on the demo's tasks: best probe 0.813 with it, 0.465 without; one seed).
EXPLORE_EVERY = 4
# Each candidate's memory is learned four times: from walks that never do what the goal asks
# (``GoalAversePolicy``) — the collection a small agent has in a world too big for it (TextWorld fetch,
# 12 rooms: the 0.5B solved 0 of 3) — and from walks that follow the candidate's own advice as its memory
# grows (``advised_walk``), as the task agent collects with it, under three seeds: memory that guides its
# own collection (a walk that explores) gathers more than memory that only speaks once it knows, and one
# advised collection of three episodes is luck (one seed ranked the best genome below the worst). The
# probe score is the mean over the four (``WALK, EXPLORER_EPISODES[, SEED]``). Evidence: on the demo's
# GraphWorld tasks (docs/results/demo-0.5b), these collections rank the four genomes the task agent played
# that beat no memory (+0.146 to +0.688) above the four that did not (+0.000), where an explorer-led
# collection (the explorer's solved episode, then goal-word walks) ranks the second best of them 5th
# (``scripts/probe_genomes.py RUN G.json ... --collections``).
PROBE_COLLECTIONS: tuple[tuple[Any, ...], ...] = (
    ("goal_averse", 0),
    ("advised", 0, 1),
    ("advised", 0, 2),
    ("advised", 0, 3),
)
# Inside a search the no-memory baseline has already played the collection tasks with the task agent, so
# its logged games (loops and all) stand in for the goal-averse walks, which modelled them
# (``LOGGED_COLLECTIONS``; the advised walks stay: they show what a candidate's advice does to its own
# collection). Evidence: the played genomes of docs/results/ discovery-fetch-0.5b, demo-0.5b,
# discovery-depot-0.5b and discovery-graphworld-0.5b (``scripts/probe_genomes.py RUN G.json ...``; the
# agent's gain over no memory in brackets), the goal-averse walk vs the logged games alone: TextWorld
# fetch, the sighted route [+0.342] 0.569 -> 0.412, the search's pick [-0.258] 0.796 -> 0.325; the demo's
# found genome [+0.708] 0.144 -> 0.812; the depot's two found genomes [+0.294, +0.195] 0.051 and 0.049 ->
# 0.410 and 0.309; GraphWorld's found genome [+0.377] 0.042 -> 0.603; the hand-built ones 0 either way.
# With the advised walks (the mean of four): demo 0.813 vs 0.000; depot 0.349 > 0.193 > 0 (three);
# GraphWorld 0.343 vs 0 (four); fetch the wrong way round (0.662 for the pick, 0.500 for the sighted
# route), which the agent check separates (``AlmaConfig.agent_checks``).
LOGGED_COLLECTIONS: tuple[tuple[Any, ...], ...] = (
    ("logged", 0),
    ("advised", 0, 1),
    ("advised", 0, 2),
    ("advised", 0, 3),
)
# A design's own collection games as the task agent played them with it, alone (the agent check, and
# what a played design's probe is measured with): the walks only model those games.
OWN_GAMES: tuple[tuple[Any, ...], ...] = (("logged", 0),)
# Inside a search the screening also learns each candidate's memory from the collection games of the task
# agent's that reached furthest so far with a design's advice (``scored_games``: an agent check's,
# a played design's), replayed alone as one more collection: the baseline's games show what a small agent
# does unadvised, and advice changes that (on ScienceWorld, after 'Avoid: focus on orange.' the 0.5B left
# the room it started in and raised the score to 0.25). Evidence: on the ScienceWorld run's tasks
# (docs/results/search-scienceworld-own-collection) memory from such games probed a genome with a route
# 0.125 (advances, a route to where the score rose) and an advances-only genome 0.000, which the
# baseline's games rank the other way round (0.047 and 0.070).
CHECKED_GAMES: tuple[tuple[Any, ...], ...] = (("logged", 0),)


def probe_collections(logged: Mapping[str, Sequence[str]] | None) -> tuple[tuple[Any, ...], ...]:
    """The collections a probe learns memory from: the agent's logged games when there are any."""
    return LOGGED_COLLECTIONS if logged else PROBE_COLLECTIONS


# Where no advice line names a listed action, the probe takes the action that names most of the goal's
# words (a task agent does that unadvised when the goal's object is in reach) instead of stopping.
PROBE_UNADVISED = "goal_words"
# An unsolved probe task counts this much at most: mostly by how far the advice took it toward the goal
# (``goal_progress``: the goal's item seen then held, its place listed then reached), a little by the
# share of steps the advice named. Without it the hill-climb is flat until a candidate solves a task:
# measured on the depot plug-in, 0 of 300 candidates solved one in 2 of 3 seeds.
STEER_CREDIT = 0.2
PROGRESS_SHARE = 0.8
# A probe task solved only because the probe's own rule took the goal-naming action (``PROBE_UNADVISED``)
# counts this share of its score: the task agent does that unadvised at about 0.40 of the turns the goal's
# object is in reach, and 0.20 under a search plan (TextWorld fetch, 0.5B, ``scripts/reach_and_take.py``),
# not every time. Without it the screening ranked a search plan alone above the same plan with a learned
# "take <the goal's thing>" rule (probe 0.619 vs 0.463), which the agent needs.
UNADVISED_CREDIT = 0.5
# A genome compiled as is shares sandbox workers in the probe (see ``probe``); False: a fresh worker per
# frozen recall as for any design (the reference of ``benchmarks/bench_screening.py --compare workers``).
SHARE_WORKERS = True


def entry_genome(entry: ArchiveEntry) -> Genome | None:
    """The genome an archive entry was compiled from (its search record's), if it has one that loads."""
    return read_genome(entry.search.genome if entry.search is not None else None)


def read_genome(data: dict[str, Any] | None) -> Genome | None:
    """``data`` as a genome, or None when there is none or it does not load under these parts (a
    genome recorded with parts or parameters this version does not have)."""
    if not isinstance(data, dict):
        return None
    try:
        return parse_genome(data)
    except InvalidInputError:
        return None


@dataclass
class Candidate:
    genome: Genome
    probe_score: float = 0.0
    solved: int = 0
    played: int = 0
    error: str = ""
    steered: float = 0.0  # probe score, with partial credit for advice followed on unsolved tasks
    # the probe again with memory from the task agent's own collection games with it (when checked)
    agent_probe: float | None = None
    agent_steered: float = 0.0
    agent_solved: int = 0
    anchor: str = ""  # the key of the checked genome (``anchors``) the climb made this one from, if any
    logs: str = ""  # the run folder's logs of the agent check's collection games with it, when checked
    collection_reached: float | None = None  # those games' mean highest score (``collection_reached``)


async def make_children(
    operator: str,
    parents: list[tuple[Genome, float | None, str]],
    keys: ObsKeys,
    rng: random.Random,
    *,
    count: int,
    seen: set[str],
    meta_llm: LLM | None = None,
    name: str,
) -> tuple[list[Genome], list[str]]:
    """Up to ``count`` new genomes (keys not in ``seen``) by ``operator``; notes say where it fell back."""
    notes: list[str] = []
    out: list[Genome] = []
    genomes = [g for g, _, _ in parents]
    for i in range(count * 4):
        if len(out) >= count:
            break
        child: Genome | None = None
        if operator == "llm_edit" and i == 0 and meta_llm is not None and genomes:
            child, why = await llm_edit(meta_llm, parents, keys, rng, name=name)
            if child is None:
                notes.append(f"llm_edit reply unusable ({why}): mutation instead")
        if child is None:
            if operator == "recombine" and len(genomes) >= 2:
                child = crossover(genomes[0], genomes[1], rng, keys, name=name)
            elif operator == "random" or not genomes:
                child = random_genome(rng, keys, name=name)
            else:
                child = mutate(
                    genomes[0] if operator != "llm_edit" or not out else out[0], rng, keys, name=name
                )
        if child.key in seen:
            continue
        seen.add(child.key)
        out.append(child)
    return out, notes


async def probe(
    design: Design,
    env: Environment,
    collection: list[Any],
    probe_tasks: list[Any],
    *,
    embedder: Embedder,
    pool: WorkerPool,
    logged: Mapping[str, Sequence[str]] | None = None,
    collections: tuple[tuple[Any, ...], ...] | None = None,
    first: int | None = None,
    checked: Mapping[str, Sequence[str]] | None = None,
    partial: bool = False,
) -> dict[str, Any]:
    """A design's advice probe: memory from ``collection`` played by each of ``collections`` (default
    ``probe_collections(logged)``; each a walk, and how many episodes the explorer plays first;
    ``logged``: the task agent's actions per collection task, for the ``logged`` walk; ``checked``: other
    games of the task agent's, one more collection replayed alone, see ``CHECKED_GAMES``), then
    ``probe_tasks`` played doing what its recall says (no LLM anywhere; see ``PROBE_UNADVISED``). Returns
    ``{probe_score, steered, solved, played, error}``, means over the collections; ``steered`` gives
    unsolved tasks partial credit for how far the advice took them (see ``STEER_CREDIT``; ``partial``:
    the environment gives a partial score, which then measures that progress, ``progress_of``). A design that
    is a genome compiled as is (the parts' own code) shares sandbox workers across its runs and recalls
    (``isolated=False``) instead of a fresh one per recall: that isolation guards against state stashed
    in a worker, which the parts never keep, and a process start per recall was most of the screening's
    time."""
    from atlas.alma.author.smoke import asmoke_run

    probes: list[dict[str, Any]] = []
    error = ""
    genome = genome_of(design)
    parts_only = SHARE_WORKERS and genome is not None and compile_genome(genome) == design.source
    sources = [(c, logged) for c in collections or probe_collections(logged)]
    sources += [(c, checked) for c in CHECKED_GAMES] if checked else []
    for (walks, explorer_episodes, *seed), games in sources:
        # Successive halving: the first ``first`` tasks (PROBE_FIRST), the rest only when the advice took one
        # somewhere.
        played: list[dict[str, Any]] = []
        cut = PROBE_FIRST if first is None else first
        for stage in (probe_tasks[:cut], probe_tasks[cut:]):
            if error or not stage or (played and not any(_scored(p) for p in played)):
                break
            report = await asmoke_run(
                design,
                env,
                tasks=(collection, stage),
                embedder=embedder,
                pool=pool,
                explorer_episodes=explorer_episodes,
                walks=walks,
                unadvised=PROBE_UNADVISED,
                seed=seed[0] if seed else 0,
                logged=games,
                isolated=not parts_only,
            )
            played += report.probes
            if report.problems or report.errors:
                error = str(report.problems[0] if report.problems else report.errors[0].error)[:200]
        probes += played
    total = max(1, len(probe_tasks) * len(sources))
    limit = max(1, int(getattr(env, "max_steps", 20) or 20))
    return {
        "probe_score": sum(_credited(p) for p in probes) / total,
        "steered": sum(
            _credited(p)
            if p.get("success")
            else max(
                _credited(p),  # a partial score counts as it is
                STEER_CREDIT
                * (
                    PROGRESS_SHARE * progress_of(p, partial)
                    + (1 - PROGRESS_SHARE) * min(1.0, p.get("steps", 0) / limit)
                ),
            )
            for p in probes
        )
        / total,
        "solved": sum(1 for p in probes if p.get("success")),
        "played": len(probes),
        "error": error,
    }


def _scored(played: dict[str, Any]) -> bool:
    """A probe task the advice took somewhere: solved, or a partial score where the environment has one."""
    return bool(played.get("success")) or _credited(played) > 0


def _credited(played: dict[str, Any]) -> float:
    """A probe task's score, ``UNADVISED_CREDIT`` of it when the probe's own rule chose a step; at least
    the score the advice handed to that rule (``advised_score``): where a wrong step drops the score
    (ScienceWorld: 0 for a wrong ``focus on``), the rule's step would otherwise credit advice that took
    the probe halfway the same as none. Advice that itself takes the wrong step keeps the final score.
    Evidence: a hand-built ScienceWorld genome the task agent played at +0.073 [+0.021, +0.135] over no
    memory (docs/results/eval-scienceworld-effects-route) probes 0.125 with memory from those games on all
    8 probe tasks, 0.000 without this credit."""
    score = float(played.get("score", 0.0))
    credited = score * UNADVISED_CREDIT if played.get("unadvised") else score
    return max(credited, float(played.get("advised_score", 0.0)))


async def screen(
    candidates: list[Genome],
    env: Environment,
    collection: list[Any],
    probe_tasks: list[Any],
    *,
    embedder: Embedder,
    pool: WorkerPool,
    logged: Mapping[str, Sequence[str]] | None = None,
    first: int | None = None,
    checked: Mapping[str, Sequence[str]] | None = None,
    partial: bool = False,
) -> list[Candidate]:
    """Each genome's advice probe (see ``probe``; ``first``: the probe tasks each plays before the rest)."""
    out = []
    for genome in candidates:
        r = await probe(
            genome_design(genome),
            env,
            collection,
            probe_tasks,
            embedder=embedder,
            pool=pool,
            logged=logged,
            first=first,
            checked=checked,
            partial=partial,
        )
        out.append(
            Candidate(
                genome=genome,
                probe_score=r["probe_score"],
                steered=r["steered"],
                solved=r["solved"],
                played=r["played"],
                error=r["error"],
            )
        )
    return out


def climb_parents(screened: list[Candidate]) -> list[Candidate]:
    """The ``PARENTS_PER_ROUND`` best-steered candidates without an error; ties go to the newest, so on
    a plateau the climb drifts over children as good as their parents (neutral drift) instead of
    mutating the first-found ones again."""
    ok = [(i, c) for i, c in enumerate(screened) if not c.error]
    return [c for _, c in sorted(ok, key=lambda ic: (-ic[1].steered, -ic[0]))][:PARENTS_PER_ROUND]


def climb_child(parent: Genome, rng: random.Random, keys: ObsKeys, *, name: str) -> Genome:
    """A mutation of ``parent``, with another change at probability ``EXTRA_CHANGE``, and again."""
    child = mutate(parent, rng, keys, name=name)
    while rng.random() < EXTRA_CHANGE:
        child = mutate(child, rng, keys, name=name)
    return child


async def evolve_candidates(
    operator: str,
    parents: list[tuple[Genome, float | None, str]],
    keys: ObsKeys,
    rng: random.Random,
    *,
    budget: int,
    seen: set[str],
    env: Environment,
    collection: list[Any],
    probe_tasks: list[Any],
    embedder: Embedder,
    pool: WorkerPool,
    meta_llm: LLM | None = None,
    name: str,
    good_enough: Callable[[Candidate], bool] | None = None,
    logged: Mapping[str, Sequence[str]] | None = None,
    checked: Mapping[str, Sequence[str]] | None = None,
    anchors: Sequence[Genome] = (),
    on_round: Callable[[str], None] | None = None,
    time_box_s: float | None = None,
    partial: bool = False,
) -> tuple[list[Candidate], list[str]]:
    """Up to ``budget`` candidates, screened with no LLM: a first round by ``operator``, then rounds of
    mutations of the best so far (by how far their advice steered the probe) — half of them random
    genomes while no candidate has solved a probe task, one in ``EXPLORE_EVERY`` after; each playing
    every probe task while none has scored (``PROBE_ALL_WHILE_FLAT``) — until one is
    ``good_enough`` or the budget is spent. ``anchors`` (genomes the task agent's own collection rated
    best, ``GenomeStep``) stay sources of the climb whatever the screening says of them; each candidate
    made from one, directly or through the climb, names it (``Candidate.anchor``). ``on_round`` hears
    a line after a round that ends ``ROUND_LINE_S`` or more after the last (a screening takes seconds on
    GraphWorld, many minutes on ScienceWorld). ``time_box_s``: no new round starts after that many
    seconds (the first round is always screened), and a note says where it stopped. ``partial``: see
    ``probe``."""
    started = time.monotonic()  # the time box counts the operator (an LLM edit takes minutes) too
    size = max(1, min(budget, ROUND_SIZE))
    lineage = {a.key: a.key for a in anchors}
    genomes, notes = await make_children(
        operator, parents, keys, rng, count=size, seen=seen, meta_llm=meta_llm, name=name
    )
    every = len(probe_tasks) if PROBE_ALL_WHILE_FLAT else None

    same: dict[str, Any] = {
        "embedder": embedder,
        "pool": pool,
        "logged": logged,
        "checked": checked,
        "partial": partial,
    }

    async def probed(genomes: list[Genome], first: int | None) -> list[Candidate]:
        return await screen(genomes, env, collection, probe_tasks, first=first, **same)

    screened = await probed(genomes, every)
    last = started

    def say() -> None:
        nonlocal last
        if on_round is not None and time.monotonic() - last >= ROUND_LINE_S:
            last = time.monotonic()
            on_round(screening_line(name, screened, budget))

    say()
    while len(screened) < budget and not (good_enough and any(good_enough(c) for c in screened)):
        if time_box_s is not None and time.monotonic() - started >= time_box_s:
            notes.append(
                f"screening stopped after {len(screened)} of up to {budget} candidates: its "
                f"{time_box_s / 60:.0f} minutes under --max-minutes were spent (budget.SCREEN_SHARE)"
            )
            break
        ranked = climb_parents(screened)
        if not ranked:
            break
        more = []
        flat = not any(c.probe_score > 0 for c in screened)  # no progress yet: explore as much as climb
        # The first parent stays a source: an operator's children can all be worse than it (an LLM
        # edit that broke a working genome), and the climb must not start from them alone.
        sources = [c.genome for c in ranked] + [g for g, _, _ in parents[:1]] + list(anchors)
        for i in range(min(size, budget - len(screened))):
            anchor = ""
            if (flat and i % 2) or (EXPLORE_EVERY and i % EXPLORE_EVERY == EXPLORE_EVERY - 1):
                child = random_genome(rng, keys, name=name)
            else:
                source = rng.choice(sources)
                child, anchor = climb_child(source, rng, keys, name=name), lineage.get(source.key, "")
            if child.key not in seen:
                seen.add(child.key)
                more.append(child)
                if anchor:
                    lineage[child.key] = anchor
        if not more:
            break
        screened += await probed(more, every if flat else None)
        say()
    for c in screened:
        c.anchor = lineage.get(c.genome.key, "")
    return screened, notes


__all__ = [
    "CHECKED_GAMES",
    "LOGGED_COLLECTIONS",
    "OWN_GAMES",
    "PROBE_COLLECTIONS",
    "Candidate",
    "climb_child",
    "climb_parents",
    "entry_genome",
    "make_children",
    "probe_collections",
    "read_genome",
    "screen",
]
