"""The problems a name that is none of them may mean: `gemv`, `dual-gemm`, `grouped` or a near typo."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

PREFIX = "nvfp4"


def _words(name: str) -> list[str]:
    """"nvfp4-Dual_GEMM" -> ["dual", "gemm"]: - and _ alike, the nvfp4 prefix dropped."""
    return [word for word in name.strip().lower().replace("-", "_").split("_") if word and word != PREFIX]


def _fits(given: str, word: str) -> bool:
    """A word of the name given stands for a word of a problem's name: its start (`gem`, `dual`), or the word
    with an ending (`grouped`, `gemms`). Two letters are the start of too many words to mean one."""
    return (len(given) >= 3 and word.startswith(given)) or given.startswith(word)


def meant(name: str, known: Sequence[str]) -> tuple[str, ...]:
    """The known problems `name` may mean, closest first: those whose every word the name's words stand for
    in turn (`dual_gemm`, `gemv`, `grouped`), the ones with the fewest words left over first; failing that, a
    near spelling of the whole name (`nvfp4_dual_gem`). Empty where nothing is near."""
    given = _words(name)
    if given:
        scored = [(len(_words(problem)) - len(given), problem) for problem in known
                  if _in_turn(given, _words(problem))]
        if scored:
            fewest = min(left for left, _ in scored)
            return tuple(problem for left, problem in scored if left == fewest)
    close = difflib.get_close_matches(name.strip().lower().replace("-", "_"), list(known), n=1, cutoff=0.8)
    return tuple(close)


def _in_turn(given: list[str], words: list[str]) -> bool:
    """Whether each given word stands for one of `words`, in their order (`gemm_dual` is not the dual GEMM)."""
    at = 0
    for word in given:
        while at < len(words) and not _fits(word, words[at]):
            at += 1
        if at == len(words):
            return False
        at += 1
    return True


def did_you_mean(name: str, known: Sequence[str]) -> str:
    """"; did you mean 'nvfp4_gemv'?" as click says it for a mistyped command, or "" where nothing is near."""
    names = meant(name, known)
    if not names:
        return ""
    return "; did you mean " + " or ".join(repr(problem) for problem in names) + "?"
