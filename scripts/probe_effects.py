"""The LLM-free advice probe of genomes that use the memory of effects (``effects`` + ``advances`` /
``recipe``) against existing-part genomes, on one environment: memory from collection episodes played by
random / goal-word / explorer walks, or walks that follow the genome's own advice as its memory grows
(``--walks advised``: how the task agent collects, and where ``untried`` acts), then the deployment tasks
played doing only what the advice says
(``follow_advice``; no model anywhere). Prints probe successes and mean score per genome and walk seed,
and the paired difference of each genome's mean score and progress from the first's (normal 95% interval).

    PYTHONPATH=src:tests/envs python scripts/probe_effects.py --env crafting --collect 8 --deploy 8
    PYTHONPATH=src python scripts/probe_effects.py --env alfworld --collect 8 --deploy 8 --walks explorer
    PYTHONPATH=src:tests/envs python scripts/probe_effects.py --env crafting --plugin crafting_env \
        --collect 3 --deploy 12 --walks advised --seeds 0,1,2,3,4,5 --only effects,effects+untried
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import statistics
from pathlib import Path

from atlas.alma.author.advice_probe import progress_of
from atlas.alma.author.smoke import asmoke_run
from atlas.alma.genome import genome_design, parse_genome
from atlas.alma.genome.operators import env_observation_keys
from atlas.envs.registry import get_env


def genomes(state_key: str, list_key: str) -> dict[str, dict]:
    keyed = {"state_key": state_key}
    return {
        "effects": {
            "encode": [{"part": "effects"}],
            "retrieve": [{"part": "advances"}, {"part": "recipe"}],
        },
        "roles": {"encode": [{"part": "roles"}], "retrieve": [{"part": "roles"}]},
        "preludes": {"encode": [{"part": "preludes"}], "retrieve": [{"part": "preludes"}]},
        "preludes+untried": {
            "encode": [{"part": "preludes"}, {"part": "effects"}],
            "retrieve": [{"part": "preludes"}, {"part": "untried"}],
        },
        "preludes+untried-no-trigger": {
            "encode": [{"part": "preludes"}, {"part": "effects"}],
            "retrieve": [{"part": "preludes"}, {"part": "untried", "params": {"trigger": False}}],
        },
        "preludes+advances+untried": {
            "encode": [{"part": "preludes"}, {"part": "effects"}],
            "retrieve": [{"part": "preludes"}, {"part": "advances"}, {"part": "untried"}],
        },
        "settings": {"encode": [{"part": "settings"}], "retrieve": [{"part": "settings"}]},
        "settings+untried": {
            "encode": [{"part": "settings"}, {"part": "effects"}],
            "retrieve": [{"part": "settings"}, {"part": "untried"}],
        },
        "settings+rises+effects+untried": {
            "encode": [{"part": "settings"}, {"part": "effects"}, {"part": "rises"}],
            "retrieve": [{"part": "settings"}, {"part": "rises"}, {"part": "advances"}, {"part": "untried"}],
        },
        "roles+effects": {
            "encode": [{"part": "roles"}, {"part": "effects"}],
            "retrieve": [{"part": "roles"}, {"part": "advances"}, {"part": "recipe"}],
        },
        "effects+untried": {
            "encode": [{"part": "effects"}],
            "retrieve": [{"part": "advances"}, {"part": "recipe"}, {"part": "untried"}],
        },
        "effects+kinds+untried": {
            "encode": [{"part": "effects"}],
            "retrieve": [{"part": "advances"}, {"part": "kinds"}, {"part": "untried"}],
        },
        "rises+effects+kinds+untried": {
            "encode": [{"part": "effects"}, {"part": "rises"}],
            "retrieve": [{"part": "rises"}, {"part": "advances"}, {"part": "kinds"}, {"part": "untried"}],
        },
        "setters+effects+kinds+untried": {
            "encode": [{"part": "effects"}, {"part": "setters"}],
            "retrieve": [{"part": "setters"}, {"part": "advances"}, {"part": "kinds"}, {"part": "untried"}],
        },
        "setters+rises+effects+kinds+untried": {
            "encode": [{"part": "effects"}, {"part": "rises"}, {"part": "setters"}],
            "retrieve": [
                {"part": "setters"},
                {"part": "rises"},
                {"part": "advances"},
                {"part": "kinds"},
                {"part": "untried"},
            ],
        },
        "setters+effects": {
            "encode": [{"part": "effects"}, {"part": "setters"}],
            "retrieve": [{"part": "setters"}, {"part": "advances"}],
        },
        "reveals+rises+effects+kinds+untried": {
            "encode": [{"part": "effects"}, {"part": "rises"}, {"part": "reveals"}],
            "retrieve": [
                {"part": "reveals"},
                {"part": "rises"},
                {"part": "advances"},
                {"part": "kinds"},
                {"part": "untried"},
            ],
        },
        "reveals+rises+effects+kinds+untried-sweep": {
            "encode": [{"part": "effects"}, {"part": "rises"}, {"part": "reveals"}],
            "retrieve": [
                {"part": "reveals"},
                {"part": "rises"},
                {"part": "advances"},
                {"part": "kinds"},
                {"part": "untried", "params": {"sweep": True}},
            ],
        },
        "reveals+rises+effects+kinds+untried-sweep-later": {
            "encode": [{"part": "effects"}, {"part": "rises"}, {"part": "reveals"}],
            "retrieve": [
                {"part": "reveals"},
                {"part": "rises"},
                {"part": "advances"},
                {"part": "kinds"},
                {"part": "untried", "params": {"sweep": True, "later": True}},
            ],
        },
        "rises+effects+kinds+untried-later": {
            "encode": [{"part": "effects"}, {"part": "rises"}],
            "retrieve": [
                {"part": "rises"},
                {"part": "advances"},
                {"part": "kinds"},
                {"part": "untried", "params": {"later": True}},
            ],
        },
        "effects+explore": {
            "encode": [
                {"part": "effects"},
                {"part": "transitions", "params": {**keyed, "neighbors_key": list_key}},
            ],
            "retrieve": [{"part": "advances"}, {"part": "recipe"}, {"part": "explore"}],
        },
        "effects+route-scored": {
            "encode": [{"part": "effects"}, {"part": "transitions", "params": keyed}],
            "retrieve": [
                {"part": "advances"},
                {"part": "recipe"},
                {"part": "route", "params": {"towards": "scored", "context": "none"}},
                {"part": "explore", "params": {"form": "rules"}},
            ],
        },
        "effects+route-named": {
            "encode": [{"part": "effects"}, {"part": "transitions", "params": keyed}],
            "retrieve": [
                {"part": "advances"},
                {"part": "recipe"},
                {"part": "route", "params": {"towards": "named", "context": "none"}},
                {"part": "explore", "params": {"form": "rules"}},
            ],
        },
        "effects+where_seen": {
            "encode": [{"part": "effects"}, {"part": "sightings", "params": keyed}],
            "retrieve": [{"part": "advances"}, {"part": "recipe"}, {"part": "where_seen"}],
        },
        "found-graphworld (replay, route, goal_rules, explore)": {
            "encode": [
                {"part": "sequences", "params": {"successes_only": False}},
                {"part": "transitions", "params": {**keyed, "neighbors_key": list_key}},
                {"part": "goal_actions", "params": {**keyed, "successes_only": False}},
            ],
            "retrieve": [
                {"part": "replay", "params": {"prefer": "most"}},
                {"part": "route"},
                {"part": "goal_rules"},
                {"part": "explore"},
            ],
        },
        "found-fetch (replay, route sighted, goal_rules, explore)": {
            "encode": [
                {"part": "goal_actions", "params": {**keyed, "any_item": True, "successes_only": True}},
                {"part": "transitions", "params": {**keyed, "neighbors_key": list_key}},
                {"part": "sightings", "params": {**keyed, "goal_only": False}},
                {"part": "sequences", "params": {"max_actions": 30, "successes_only": True, "idle": "keep"}},
            ],
            "retrieve": [
                {"part": "replay", "params": {"match": "shape", "prefer": "latest", "form": "plan"}},
                {"part": "route", "params": {"context": "none", "towards": "sighted"}},
                {"part": "goal_rules", "params": {"min_support": 2}},
                {"part": "explore", "params": {"form": "plan", "max_steps": 30}},
            ],
        },
        "found-workbench (replay rules)": {
            "encode": [{"part": "sequences", "params": {"successes_only": False, "idle": "drop"}}],
            "retrieve": [{"part": "replay", "params": {"match": "goal", "prefer": "most", "form": "rules"}}],
        },
        "where_seen+goal_rules": {
            "encode": [
                {"part": "sightings", "params": keyed},
                {"part": "goal_actions", "params": {**keyed, "successes_only": False}},
            ],
            "retrieve": [{"part": "where_seen"}, {"part": "goal_rules"}],
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--env", default="crafting")
    ap.add_argument("--plugin", default="", help="module to import first (registers a plug-in)")
    ap.add_argument("--collect", type=int, default=8)
    ap.add_argument("--deploy", type=int, default=8)
    ap.add_argument(
        "--walks",
        default="random",
        help="random, goal_words, goal_averse, explorer, or advised (each collection game played with the "
        "genome's own advice as its memory grows, as the task agent collects)",
    )
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--unadvised", default="goal_words", choices=["stop", "goal_words"])
    ap.add_argument("--family", type=int, default=0)
    ap.add_argument("--task-type", default="", help="ScienceWorld task type(s), comma-separated")
    ap.add_argument(
        "--env-param", action="append", default=[], help="KEY=VALUE for the environment (challenge=fetch)"
    )
    ap.add_argument("--only", default="", help="comma-separated genome names (the name before any space)")
    ap.add_argument(
        "--state-key",
        default="",
        help="the observation field naming where the agent is (default: the likeliest)",
    )
    ap.add_argument(
        "--genome",
        action="append",
        default=[],
        help="a genome JSON file to probe too (a search's pick: the archive entry's search.genome)",
    )
    ap.add_argument("--dump", default="", help="write each genome's per-episode scores to this JSON file")
    ap.add_argument(
        "--against",
        default="",
        help="a --dump file of the same command run with other code (PYTHONPATH=OLD/src): each genome's "
        "paired difference from its scores there, on the same probe episodes",
    )
    args = ap.parse_args()
    if args.plugin:
        importlib.import_module(args.plugin)
    params = dict(kv.split("=", 1) for kv in args.env_param)
    env = get_env(args.env, **params, **({"task_type": args.task_type} if args.task_type else {}))
    tasks = env.generate_family_tasks(args.collect + args.deploy, args.family, 100)
    keys = env_observation_keys(env)
    state = args.state_key or (keys.scalar[0] if keys.scalar else "")
    lists = keys.lists[0] if keys.lists else ""
    explorer = args.collect if args.walks == "explorer" else 0
    walks = "goal_words" if args.walks == "explorer" else args.walks
    results: dict[str, list[float]] = {}
    played: dict[str, list[dict]] = {}
    print(
        f"env {args.env}: {args.collect} collection tasks ({args.walks}), {args.deploy} probe tasks, "
        f"unadvised={args.unadvised}; state_key={state!r} list_key={lists!r}"
    )
    files = {Path(f).stem: json.loads(Path(f).read_text(encoding="utf-8")) for f in args.genome}
    for name, spec in {**genomes(state, lists), **files}.items():
        if args.only and name.split(" ")[0] not in args.only.split(","):
            continue
        genome = parse_genome({**spec, "name": name.split(" ")[0]})
        scores: list[float] = []
        progress: list[dict] = []
        solved = 0
        for seed in [int(s) for s in args.seeds.split(",")]:
            report = asyncio.run(
                asmoke_run(
                    genome_design(genome),
                    env,
                    tasks=(tasks[: args.collect], tasks[args.collect :]),
                    explorer_episodes=explorer,
                    walks=walks,
                    seed=seed,
                    unadvised=args.unadvised,
                )
            )
            if not report.ran_clean:
                print(report.to_feedback()[:2000])
            scores += [p["score"] for p in report.probes]
            progress += report.probes
            solved += sum(p["success"] for p in report.probes)
        results[name], played[name] = scores, progress
        print(f"  {name}: solved {solved} of {len(scores)}, mean score {statistics.mean(scores):.3f}")
    # progress is read one way for the whole environment: by the score where any episode rose unsolved
    partial = any(not p["success"] and p.get("reached", 0.0) > 0 for ps in played.values() for p in ps)
    reached = {name: [progress_of(p, partial) for p in ps] for name, ps in played.items()}
    how = "the highest score reached" if partial else "goal words shown, the score where it rose"
    for name, values in reached.items():
        print(f"  {name}: mean progress {statistics.mean(values):.3f} ({how})")
    if args.dump:
        Path(args.dump).write_text(json.dumps({"score": results, "progress": reached}))
    names = list(results)
    for measure, table in (("score", results), ("progress", reached)):
        for other in names[1:]:
            _paired(f"{names[0]} - {other} ({measure})", table[names[0]], table[other])
    if args.against:
        before = json.loads(Path(args.against).read_text(encoding="utf-8"))
        for measure, table in (("score", results), ("progress", reached)):
            for name in [n for n in names if n in before[measure]]:
                _paired(f"{name}: this code - {args.against} ({measure})", table[name], before[measure][name])


def _paired(label: str, a: list[float], b: list[float]) -> None:
    d = [x - y for x, y in zip(a, b, strict=True)]
    m = statistics.mean(d)
    half = 1.96 * statistics.stdev(d) / len(d) ** 0.5 if len(d) > 1 else 0.0
    print(f"  {label}: {m:+.3f} [{m - half:+.3f}, {m + half:+.3f}] (paired, {len(d)} probe episodes)")


if __name__ == "__main__":
    main()
