"""Render parts: advice items → the text ``recall`` returns. ``render_<part>(items, p)``.

Rules are written "<situation>: <action>", plans as one line of comma-separated actions (what was not
tried yet after every other plan) and what not to do as "Avoid: <action>.": the forms the task agent's advice matcher acts on (a rule applies when what the
agent sees shows its situation and its action is listed; a plan gives the next listed step after what was
done; an avoided action is lowered).
"""


def _rule_line(item, style):
    cond = [c for c in item.get("cond", []) if c]
    if not cond:
        return ""
    if style == "split":
        situation = ". ".join(cond)
    elif style == "bare":
        situation = " ".join(cond)
    else:  # "In hall with the key", "In hall with holding key", "Lying here key"
        head = cond[0][:1].upper() + cond[0][1:] if " " in cond[0] else "In " + cond[0]
        rest = [c if " " in c else "the " + c for c in cond[1:]]
        situation = head + ("" if not rest else " with " + " and ".join(rest))
    return situation + ": " + item.get("action", "") + "."


def _plan_line(item):
    steps = [s for s in item.get("steps", []) if s]
    return (item.get("title") or "Plan") + ": " + ", ".join(steps) + "." if steps else ""


def _within(lines, budget):
    """At most ``budget`` of ``[(source, line)]``, kept in order; over budget, each retrieve part
    (``source``) gets its turn: its first line, then every part's second, ... (one part's many rules
    do not crowd out another's one)."""
    if budget <= 0 or len(lines) <= budget:
        return [line for _, line in lines]
    rank, taken = [], {}
    for source, _ in lines:
        rank.append(taken.get(source, 0))
        taken[source] = rank[-1] + 1
    keep = sorted(range(len(lines)), key=lambda i: (rank[i], i))[:budget]
    return [lines[i][1] for i in sorted(keep)]


def render_lines(items, p):
    """Rules, plans and notes in the order of ``p['order']``, then what to avoid, at most ``p['max_lines']``
    lines (shared fairly among the retrieve parts when there are more: ``_within``), each rule and plan
    once; '' when nothing applies."""
    order = [*p.get("order", "rules,plans,notes").split(","), "untrieds", "avoids"]
    lines, seen = [], set()
    for kind in order:
        for item in items:
            if item.get("kind") + "s" != kind:
                continue
            if kind == "rules":
                line = _rule_line(item, p.get("style", "joined"))
            elif kind in ("plans", "untrieds"):  # what was not tried: a plan after every other one
                line = _plan_line(item)
            elif kind == "avoids":
                line = "Avoid: " + item.get("action", "") + "." if item.get("action") else ""
            else:
                line = item.get("text", "")
            if line and (kind == "notes" or line not in seen):
                seen.add(line)
                lines.append((item.get("source", 0), line))
    return "\n".join(_within(lines, p.get("max_lines", 60)))
