"""A setup client that says `version` and quits at a moment of real time while the two
participants run (each sets a key twenty times), then the program fails on purpose: its
run is replayed to check that it is deterministic, and the setup's commands, changing
nothing a participant sees, must not make it look otherwise wherever they land."""

import random
import sys
import threading
import time

from pymemcache.client.base import Client
from mcsim_control import Participant, run_participants, servers

setup = Client(servers()[0])
setup.set("k", "0", noreply=False)


def late_quit():
    time.sleep(random.uniform(0, 0.02))
    setup.version()
    setup.quit()


def worker(i):
    me = Participant(f"t{i}")
    c = Client(servers()[0])
    c.get(me.name_key)
    for r in range(20):
        c.set("k", f"t{i}.{r}", noreply=False)


quitter = threading.Thread(target=late_quit)
quitter.start()
run_participants(worker, 2)
quitter.join()
sys.exit(1)
