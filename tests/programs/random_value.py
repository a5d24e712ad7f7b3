"""Not deterministic under a fixed schedule: each participant stores a value drawn from
the operating system's randomness, then the program fails on purpose. `mcsim test`
replays the failing run, sees another trace, and says so instead of judging it."""

import os
import sys

from pymemcache.client.base import Client
from mcsim_control import Participant, run_participants, servers


def worker(i):
    me = Participant(f"t{i}")
    c = Client(servers()[0])
    c.get(me.name_key)
    c.set("k", os.urandom(4).hex(), noreply=False)
    c.close()
    me.close()


run_participants(worker, 2)
sys.exit(1)
