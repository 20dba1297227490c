"""Timing helpers for the benchmarks: best of several runs, contenders taking turns.

On a shared machine a run is only ever slowed down (by other processes, by a thread that is not
scheduled), never sped up, so the best of several runs is the most faithful figure. Contenders
take turns in rounds, so that a busy spell on the machine hits all of them rather than one.
"""

import time
from typing import Callable, Dict, Optional


def best_time(fn: Callable[[], object], budget: float = 0.2, min_runs: int = 3, max_runs: int = 200) -> float:
    """The shortest of at least ``min_runs`` runs of ``fn`` (more while ``budget`` seconds last)."""
    best = float("inf")
    spent = 0.0
    runs = 0
    while runs < min_runs or (spent < budget and runs < max_runs):
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        best = min(best, elapsed)
        spent += elapsed
        runs += 1
    return best


def compare(
    contenders: Dict[str, Optional[Callable[[], object]]], rounds: int = 3, budget: float = 0.1, pause: float = 0.05
) -> Dict[str, float]:
    """Best time of each contender (None: not measured), over ``rounds`` rounds of turns.

    Each contender runs once untimed first (compiling, caching, allocating). Between turns the
    machine gets ``pause`` seconds: the threads of numpy's BLAS (OpenBLAS: about 0.1 s) and of
    PyTorch keep spinning for a while after their work, and would otherwise hold a core that the
    next contender's threads need.
    """
    best: Dict[str, float] = {}
    for name, fn in contenders.items():
        if fn is not None:
            fn()
            best[name] = float("inf")
    for _ in range(rounds):
        for name, fn in contenders.items():
            if fn is not None:
                time.sleep(pause)
                best[name] = min(best[name], best_time(fn, budget))
    return best


def format_time(seconds: Optional[float]) -> str:
    """A time with a unit that keeps 3 significant figures: 12.3 us, 4.56 ms, 1.23 s."""
    if seconds is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def format_ratio(numerator: Optional[float], denominator: Optional[float]) -> str:
    """numerator / denominator to 2 decimals, or '-' when either is missing."""
    if numerator is None or denominator is None or denominator == 0:
        return "-"
    return f"{numerator / denominator:.2f}"
