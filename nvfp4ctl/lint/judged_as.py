"""The line `lint` and `build` say for a file judged by a problem of its own (an export header, one problem's
C ABI in its code, its file name, the task.yml above it) rather than the task's: a warning, as such a file
fails every test on the task's leaderboard, except where its name or its place says it plainly, which the user
chose on purpose (said with -v)."""

from __future__ import annotations

from nvfp4ctl.console import get_console
from nvfp4ctl.lint.submission import PLAIN_REASONS


def say_judged_as(shown: str, problem: str, why: str, task_problem: str, task_is_users: bool) -> None:
    """`shown: checked as PROBLEM (WHY), not as the task's TASK_PROBLEM`; where no task.yml of the user's is in
    use, the shipped task standing in is named as such: "the task's" would name a task the user has not."""
    instead = (f"not as the task's {task_problem}" if task_is_users else
               f"not as {task_problem}, the problem of the shipped task that stands in for a task.yml")
    console = get_console()
    (console.detail if why in PLAIN_REASONS else console.warn)(f"{shown}: checked as {problem} ({why}), {instead}")
