"""Counters kept in memcached.

GetSetCounter reads the value, adds one and writes it back: two clients that read the
same value both write value + 1, and one increment is lost. IncrAddCounter uses
memcached's atomic `incr`; when the key does not exist yet, it creates it with `add`
(which only one client can win) and retries with `incr` if another client created it
first. RetryingCounter is IncrAddCounter with the retry people add when the network
hiccups: an increment whose reply did not arrive is made again, so one whose command had
reached the server counts twice.
"""


class GetSetCounter:
    def __init__(self, client, name: str):
        self.client, self.key = client, f"counter_{name}"

    def increment(self, by: int = 1) -> None:
        current = self.client.get(self.key)
        value = int(current) if current is not None else 0
        self.client.set(self.key, str(value + by), noreply=False)

    def value(self) -> int:
        current = self.client.get(self.key)
        return int(current) if current is not None else 0


class IncrAddCounter:
    def __init__(self, client, name: str):
        self.client, self.key = client, f"counter_{name}"

    def increment(self, by: int = 1) -> None:
        while True:
            if self.client.incr(self.key, by, noreply=False) is not None:
                return
            if self.client.add(self.key, str(by), noreply=False):
                return

    def value(self) -> int:
        current = self.client.get(self.key)
        return int(current) if current is not None else 0


class RetryingCounter(IncrAddCounter):
    def increment(self, by: int = 1) -> None:
        while True:
            try:
                return super().increment(by)
            except (OSError, Exception) as e:  # the client's error, whatever its kind
                if isinstance(e, (KeyboardInterrupt, SystemExit)):
                    raise
