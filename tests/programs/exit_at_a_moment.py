"""Exits 3 at a moment of real time while its three participants still run (each sets a
key and sleeps 0.1 s of virtual time, a thousand times): the exit is no step of the
schedule, so `mcsim test` judges the run by its status and compares its replay only up to
where the program began to end."""

import os
import threading
import time

from pymemcache.client.base import Client
from mcsim_control import Participant, run_participants, servers


def worker(i):
    me = Participant(f"t{i}")
    c = Client(servers()[0])
    c.get(me.name_key)
    for r in range(1000):
        c.set("k", str(r), noreply=False)
        me.sleep(0.1)


threading.Thread(target=run_participants, args=(worker, 3), daemon=True).start()
time.sleep(0.3)
os._exit(3)
