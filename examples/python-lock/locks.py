"""Two memcached locks, as services write them, to be tested against `mcsim serve`.

GetSetLock checks with `get` and takes with `set`: two clients can both see the key
missing and both take it. AddLock takes with `add` and a TTL: memcached lets one `add`
win, and the TTL frees the lock if its holder dies, or pauses past it.

Between attempts each lock waits by calling `wait` if it is given one (a participant's
`sleep`, which passes virtual time under `mcsim test`). Releases (and the get+set lock's `set`) go with `noreply` when asked, as pymemcache sends
them by default: the client does not wait for the server's answer.
"""

from pymemcache.client.base import Client


class GetSetLock:
    def __init__(self, client: Client, name: str, owner: str, noreply: bool = False, wait=None):
        self.client, self.key, self.owner = client, f"lock_{name}", owner
        self.noreply, self.wait = noreply, wait

    def acquire(self, attempts: int = 20) -> bool:
        for attempt in range(attempts):
            if attempt and self.wait:
                self.wait()
            if self.client.get(self.key) is None:
                self.client.set(self.key, self.owner, noreply=self.noreply)
                return True
        return False

    def release(self) -> None:
        self.client.delete(self.key, noreply=self.noreply)


class AddLock:
    def __init__(
        self, client: Client, name: str, owner: str, ttl: int = 5, noreply: bool = False, wait=None
    ):
        self.client, self.key, self.owner, self.ttl = client, f"lock_{name}", owner, ttl
        self.noreply, self.wait = noreply, wait

    def acquire(self, attempts: int = 20) -> bool:
        for attempt in range(attempts):
            if attempt and self.wait:
                self.wait()
            if self.client.add(self.key, self.owner, expire=self.ttl, noreply=False):
                return True
        return False

    def release(self) -> None:
        self.client.delete(self.key, noreply=self.noreply)


def overlaps(log: str) -> list[str]:
    """The entries of a log of `+name` (entered) and `-name` (left) at which a second
    thread entered while another was inside."""
    inside, bad = None, []
    for entry in log.split():
        who = entry[1:]
        if entry.startswith("+"):
            if inside is not None:
                bad.append(f"{who} entered while {inside} was inside")
            inside = who
        elif inside == who:
            inside = None
    return bad
