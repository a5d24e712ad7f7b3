"""A leader lease kept in memcached: the client whose `add` of the lease key stores it
leads until the key expires, and renews it while it leads.

TouchLease is the lease as commonly written: it renews with `touch`, and leads as long
as its last `add` or `touch` answered yes. `touch` renews the key whoever holds it, so a
leader that stalled past the key's expiry (a long GC pause, a stopped VM) renews its
successor's lease, believes it still leads, and two clients lead at once.

CheckedLease renews only its own lease (`gets`, then `cas` with its own value), and
leads only until the time its lease must still be alive: the key's TTL counted from
before the command was sent, less the second memcached's clock may round away. A command
whose reply never came counts as not renewed; an `add` whose reply was lost is found by
the next attempt, which reads the key back.

Both take `now`, a function giving seconds (the participant's virtual clock under
`mcsim test`), and treat a client error as "not leading".
"""


def _client_error(e: BaseException) -> bool:
    """True for a client's error (a lost reply, a reset connection), whatever its class."""
    return not isinstance(e, (KeyboardInterrupt, SystemExit))


class TouchLease:
    def __init__(self, client, key: str, me: str, ttl: int, now):
        self.client, self.key, self.me, self.ttl, self.now = client, key, me, ttl, now
        self.leading = False

    def leads(self, for_seconds: float) -> bool:
        """True if this client may act as the leader for the next `for_seconds`."""
        return self.leading

    def acquire(self) -> None:
        try:
            self.leading = self.client.add(self.key, self.me, expire=self.ttl, noreply=False)
        except Exception as e:
            if not _client_error(e):
                raise
            self.leading = False

    def renew(self) -> None:
        try:
            self.leading = self.client.touch(self.key, expire=self.ttl, noreply=False)
        except Exception as e:
            if not _client_error(e):
                raise
            self.leading = False


class CheckedLease:
    def __init__(self, client, key: str, me: str, ttl: int, now):
        self.client, self.key, self.me, self.ttl, self.now = client, key, me, ttl, now
        # The time until which the lease is surely alive, if this client holds it.
        self.until = None

    def leads(self, for_seconds: float) -> bool:
        return self.until is not None and self.now() + for_seconds <= self.until

    def _alive_until(self, sent: float) -> float:
        # memcached counts TTLs in whole seconds of its own clock: a key set with TTL n
        # lives more than n - 1 seconds from when the command was sent.
        return sent + self.ttl - 1

    def acquire(self) -> None:
        sent = self.now()
        try:
            if self.client.add(self.key, self.me, expire=self.ttl, noreply=False):
                self.until = self._alive_until(sent)
                return
        except Exception as e:
            if not _client_error(e):
                raise
            self.until = None
            return
        # Taken: by another client, or by this one whose earlier `add` lost its reply.
        self.renew()

    def renew(self) -> None:
        sent = self.now()
        self.until = None
        try:
            value, cas = self.client.gets(self.key)
            if value is None or value.decode() != self.me:
                return
            if self.client.cas(self.key, self.me, cas, expire=self.ttl, noreply=False):
                self.until = self._alive_until(sent)
        except Exception as e:
            if not _client_error(e):
                raise
