"""Exits 3 after its participants ran: `mcsim test` reports the exit status as the
program's own verdict, in words, with the replay line."""

import sys
from pymemcache.client.base import Client
from mcsim_control import Participant, run_participants, servers
def worker(i):
    me = Participant(f"t{i}")
    c = Client(servers()[0])
    c.get(me.name_key)
    c.incr("n", 1, noreply=False)
    c.close()
    me.close()

run_participants(worker)
sys.exit(3)
