"""A look-aside cache of one database row, invalidated by its writer.

A read gets the row's cached value; on a miss it reads the database and fills the cache.
A writer updates the row, then deletes the key. `FillWithSet` fills with `set` and
`FillWithAdd` with `add`: a reader that read the row before an update and fills after its
delete stores the old version, and it stays cached (a stale set). `LeaseWithCas` takes a
lease on a miss: it `add`s an empty placeholder, reads its cas unique with `gets`, reads
the database and fills with `cas`; the writer's delete removes the placeholder, so a late
fill is refused. A reader that finds a placeholder serves the row from the database.

Each read returns `(version, refused)`: the version served, and whether its fill was
refused.
"""


def _version(value):
    """The version a cached value holds, or None for a placeholder."""
    if value and value.startswith(b"v"):
        return int(value[1:])
    return None


class FillWithSet:
    def __init__(self, client, row: str, ttl: int = 60, lease_ttl: int = 10):
        self.client, self.key, self.ttl, self.lease_ttl = client, f"row_{row}", ttl, lease_ttl

    def read(self, database):
        cached = _version(self.client.get(self.key))
        if cached is not None:
            return cached, False
        version = database.read()
        return version, not self._fill(version)

    def _fill(self, version) -> bool:
        self.client.set(self.key, f"v{version}", expire=self.ttl, noreply=False)
        return True

    def invalidate(self) -> None:
        self.client.delete(self.key, noreply=False)


class FillWithAdd(FillWithSet):
    def _fill(self, version) -> bool:
        return self.client.add(self.key, f"v{version}", expire=self.ttl, noreply=False)


class LeaseWithCas(FillWithSet):
    def read(self, database):
        found = self.client.get(self.key)
        if found is not None:
            cached = _version(found)
            return (cached, False) if cached is not None else (database.read(), False)
        if not self.client.add(self.key, "", expire=self.lease_ttl, noreply=False):
            return database.read(), False
        value, cas = self.client.gets(self.key)
        lease = cas if value == b"" else None
        version = database.read()
        if lease is None:
            return version, True
        stored = self.client.cas(self.key, f"v{version}", lease, expire=self.ttl, noreply=False)
        return version, not stored
