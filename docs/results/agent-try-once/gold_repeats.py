"""Gold plans: how often a step repeats an earlier step of the same plan that raised the score."""
import sys
from atlas.envs.registry import get_env
from atlas.protocols.env import Action

def check(name, plan_of, n=12, **kw):
    env = get_env(name, **kw)
    tasks = env.generate_tasks(n, seed=3)
    steps = rep = solved = 0
    egs = []
    for t in tasks:
        env.reset(t)
        plan = plan_of(env, t)
        if not plan:
            continue
        raised, before = set(), float(env.score())
        for a in plan:
            act = a if isinstance(a, Action) else Action("act", {"command": a})
            key = str(a)
            if key in raised:
                rep += 1; egs.append(key)
            r = env.step(act); steps += 1
            after = float(env.score())
            if after > before + 1e-9:
                raised.add(key)
            before = after
            if r.done:
                break
        solved += bool(env.success())
    print(f"{name}: {len(tasks)} tasks, {solved} solved by the gold plan, {steps} steps, {rep} repeat an earlier score-raising step {egs[:5]}")

which = sys.argv[1:]
if "textworld" in which:
    check("textworld", lambda e, t: e.gold_plan())
if "alfworld" in which:
    check("alfworld", lambda e, t: e.gold_plan())
if "scienceworld" in which:
    check("scienceworld", lambda e, t: e.gold_path(t), n=8)
if "assay" in which:
    import heldout_assay
    env = heldout_assay.AssayEnv()
    for fam in (4, 5, 9):
        tasks = env.generate_family_tasks(8, fam, 3)
        rep = steps = solved = 0
        for t in tasks:
            env.reset(t); raised=set(); before=0.0
            for tool, r in env.gold_plan(t):
                a = Action(tool, {"reagent": r} if r else {})
                rep += str(a) in raised
                env.step(a); steps += 1
                if env.score() > before: raised.add(str(a))
                before = env.score()
            solved += env.success()
        print(f"assay family {fam}: {solved}/{len(tasks)} solved, {steps} steps, {rep} repeats")
