"""Per-key token bucket (the upstream service limits /todos per user)."""

import threading
import time
from dataclasses import dataclass

from .config import RATE_LIMIT_PERIOD_SECONDS, RATE_LIMIT_TOKENS


@dataclass
class _Bucket:
    tokens: int
    next_refill: float


class TokenBucketLimiter:
    """``capacity`` tokens per key, topped up by ``capacity`` every ``period`` seconds,
    counted from the key's first request. No waiting queue: a request that finds the
    bucket empty is rejected at once."""

    def __init__(self, capacity: int = RATE_LIMIT_TOKENS,
                 period: float = RATE_LIMIT_PERIOD_SECONDS):
        self.capacity = capacity
        self.period = period
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()

    def try_acquire(self, key: str) -> bool:
        now = time.monotonic()
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                bucket = self._buckets[key] = _Bucket(self.capacity, now + self.period)
            if now >= bucket.next_refill:
                periods = int((now - bucket.next_refill) // self.period) + 1
                bucket.tokens = min(self.capacity, bucket.tokens + periods * self.capacity)
                bucket.next_refill += periods * self.period
            if bucket.tokens >= 1:
                bucket.tokens -= 1
                return True
            return False

    def clear(self) -> None:
        with self._lock:
            self._buckets.clear()
