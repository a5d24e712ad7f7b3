"""The `add` lock with a client that tries again after a connection error, for `mcsim
test --crash P` and `--skip-second P`: each of MCSIM_CLIENTS threads takes the lock twice
(`add` with a 5 s TTL), works inside the section `section` for HOLD seconds of virtual
time (0 by default) and releases it with `delete`; mcsim judges the exclusion from
`enter`/`leave`.

- A crash of the server while one holds the lock loses the lock's key: the next `add`, on
  a reconnected client, wins too, and two are inside at once.
- memcached counts a TTL on a whole-second clock: a 5 s TTL ends between 4 and 5 s after
  the `add`, by where in its second the server's clock ticks (the tick phase mcsim draws
  per run). Holding 3.9 s is safe on a server whose clock keeps time; one that skips a
  second ends the TTL under the holder, and another takes the lock. Holding 4.5 s breaks
  at some tick phases without any fault.

    mcsim test --clients 2 --crash 0.05 -- python3 retry_add_lock.py
    mcsim test --clients 2 --skip-second 0.2 -- python3 retry_add_lock.py 3.9
    mcsim test --clients 2 -- python3 retry_add_lock.py 4.5
"""

import sys

from pymemcache.client.base import Client
from pymemcache.exceptions import MemcacheError

from mcsim_control import Participant, run_participants, servers

HOLD = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0


def retried(call):
    """`call()`, made again after each connection error (pymemcache reconnects on the
    next call)."""
    while True:
        try:
            return call()
        except (MemcacheError, OSError):
            pass


def worker(i: int) -> None:
    name = f"t{i}"
    me = Participant(name)
    c = Client(servers()[0])
    c.get(me.name_key)
    for _ in range(2):
        while not retried(lambda: c.add("lock", name, expire=5, noreply=False)):
            me.sleep(0.05)
        me.enter("section")
        retried(lambda: c.set("work", name, noreply=False))
        if HOLD:
            me.sleep(HOLD)
        me.leave("section")
        retried(lambda: c.delete("lock", noreply=False))
    c.close()
    me.close()


run_participants(worker)
