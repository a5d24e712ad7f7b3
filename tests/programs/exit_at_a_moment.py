"""Exits 3 at a moment of real time while its three participants still run (each sets a
key and sleeps 0.1 s of virtual time, a thousand times): the exit is no step of the
schedule, so `mcsim test` judges the run by its status and compares its replay only up to
where the program began to end. The moment is 0.3 s after every participant's first
`set` returned, so that all three take part however slowly the machine starts them."""

import os
import threading
import time

from pymemcache.client.base import Client
from mcsim_control import Participant, run_participants, servers

lock = threading.Lock()
first_sets = 0
all_set = threading.Event()


def worker(i):
    global first_sets
    me = Participant(f"t{i}")
    c = Client(servers()[0])
    c.get(me.name_key)
    for r in range(1000):
        c.set("k", str(r), noreply=False)
        if r == 0:
            with lock:
                first_sets += 1
                if first_sets == 3:
                    all_set.set()
        me.sleep(0.1)


threading.Thread(target=run_participants, args=(worker, 3), daemon=True).start()
all_set.wait(30)
time.sleep(0.3)
os._exit(3)
