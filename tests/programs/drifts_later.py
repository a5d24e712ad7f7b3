"""Deterministic for its first two runs, then not: each participant stores the number of
runs made so far, counted in the file given (a program whose behaviour drifts between
runs: a cache on disk, a clock). The first run fails and its replay gives the same
trace; the runs shrinking makes do not, and `mcsim test` says so instead of judging."""

import sys

from pymemcache.client.base import Client
from mcsim_control import Participant, run_participants, servers

with open(sys.argv[1], "a+") as counter:
    counter.seek(0)
    runs = len(counter.read())
    counter.write(".")
value = "same" if runs < 2 else f"run-{runs}"


def worker(i):
    me = Participant(f"t{i}")
    c = Client(servers()[0])
    c.get(me.name_key)
    c.set("k", value, noreply=False)
    c.close()
    me.close()


run_participants(worker, 2)
sys.exit(1)
