"""A token-bucket rate limiter with an injectable clock and sleep (tests never really sleep)."""

from __future__ import annotations

import time
from collections.abc import Callable


class RateLimiter:
    """Token bucket: ``rate`` tokens per second, at most ``burst`` stored; ``acquire()`` sleeps until one is free."""

    def __init__(self, rate: float, burst: int = 1, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.rate = float(rate)
        self.burst = max(1, int(burst))
        self.clock = clock
        self.sleep = sleep
        self._tokens = float(self.burst)
        self._last = clock()

    @classmethod
    def per_minute(cls, n: float, burst: int = 1, clock: Callable[[], float] = time.monotonic,
                   sleep: Callable[[float], None] = time.sleep) -> RateLimiter:
        return cls(n / 60.0, burst=burst, clock=clock, sleep=sleep)

    def _refill(self) -> None:
        now = self.clock()
        self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
        self._last = now

    def acquire(self) -> None:
        """Take one token, sleeping until one is free."""
        self._refill()
        if self._tokens < 1.0:
            self.sleep((1.0 - self._tokens) / self.rate)
            self._refill()
            # a fake clock that did not advance still gets its token: we slept for it
            self._tokens = max(self._tokens, 1.0)
        self._tokens -= 1.0
