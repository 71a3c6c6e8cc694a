"""Loop detection for the task agent: small models repeat a failed action or bounce between two
actions forever, and with greedy decoding the same prompt gives the same mistake every turn.

``loop_nudge`` looks at the actions taken so far and the one just proposed, and returns a short
note for the model when the proposal would continue a loop (None otherwise). It knows nothing of
any environment: it compares canonical action texts and whether each one failed.
"""

from __future__ import annotations

Past = list[tuple[str, bool]]  # (canonical action text, whether it failed)


def loop_nudge(proposed: str, past: Past, *, repeats: int = 3, window: int = 6) -> str | None:
    """A note when ``proposed`` repeats a failure, alternates between two actions, repeats the
    same action ``repeats`` times in a row, or would be taken a third time within ``window`` turns
    (a longer cycle: room D, B, D, C, D, ...; 0 turns that check off)."""
    if past and past[-1] == (proposed, True):
        return (
            f"Your last action {proposed} failed; doing it again will fail again. Choose a different action."
        )
    if len(past) >= 3 and proposed == past[-2][0] and past[-1][0] == past[-3][0] and proposed != past[-1][0]:
        return (
            f"You are going back and forth between {proposed} and {past[-1][0]} without progress. "
            "Choose a different action that moves you toward the goal."
        )
    tail = [a for a, _ in past[-(repeats - 1) :]] if repeats > 1 else []
    if len(tail) == repeats - 1 and all(a == proposed for a in tail):
        return f"You have done {proposed} {repeats - 1} times in a row already. Choose a different action."
    if window and sum(a == proposed for a, _ in past[-window:]) >= 2:
        return (
            f"You have done {proposed} twice in your last {window} actions: you are going in circles. "
            "Choose an action you have not tried recently."
        )
    return None


__all__ = ["Past", "loop_nudge"]
