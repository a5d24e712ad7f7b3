"""A counter of the visitors of the last period, kept in two memcached keys.

Time is cut into windows of `period` seconds. In one window increments go to one key and
reads to the other; in the next window the two swap, so a read in a window finds the
count of the window before. The increment key is created by the first visit of its window
with a TTL of two periods, so that it is gone by the time it takes increments again.
Written as its source shows it, that TTL counts from the key's creation: a key created
`s` seconds into its window outlives its turn by `s` seconds, and the first visits of its
next turn land on the old key and vanish with it.
"""


class VisitorCounter:
    def __init__(self, client, name: str, period: int, clock):
        self.client, self.name, self.period, self.clock = client, name, period, clock

    def _active(self, now: float) -> int:
        return 0 if now % (2 * self.period) < self.period else 1

    def increment(self) -> None:
        key = f"{self.name}_{1 - self._active(self.clock())}"
        while self.client.incr(key, 1, noreply=False) is None:
            if self.client.add(key, "1", expire=2 * self.period, noreply=False):
                return

    def value(self) -> int:
        key = f"{self.name}_{self._active(self.clock())}"
        current = self.client.get(key)
        return int(current) if current is not None else 0
