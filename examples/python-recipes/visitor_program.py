"""A program for `mcsim test`: MCSIM_CLIENTS threads visit a page at random instants
(WINDOWS windows of PERIOD seconds, VISITS_PER_S visits a second over all of them) and,
in each window, read the counter once; the program fails if a read does not give the
number of visits of the window before. Time is the servers' clock (`Participant.now`),
virtual under `mcsim test`, and waits are `Participant.sleep`.

    mcsim test --clients 3 -- python3 visitor_program.py
"""

import math
import os
import pathlib
import random
import sys
import threading

from pymemcache.client.base import Client

from recipes.visitor import VisitorCounter

# mcsim's helper for programs under `mcsim test` (helpers/python in the repository).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "helpers" / "python"))
from mcsim_control import Participant, run_participants, servers  # noqa: E402

PERIOD, WINDOWS, VISITS_PER_S = 4, 5, 0.5


def main() -> int:
    threads = int(os.environ.get("MCSIM_CLIENTS", "3"))
    seed = int(os.environ.get("MCSIM_SEED", "0"))
    server = servers()[0]
    visits: list[float] = []  # when each visit was counted, over every thread
    record = threading.Lock()
    wrong: list[str] = []

    def worker(i: int) -> None:
        me = Participant(f"t{i}")
        c = Client(server)
        c.get(me.name_key)
        counter = VisitorCounter(c, "visitors", PERIOD, me.now)
        draw = random.Random(seed * 1000 + i)
        start = me.now()
        end = start + WINDOWS * PERIOD
        # This thread's visits and reads, in time order: a read in every window after the
        # first, at a random instant inside it.
        events, at = [], start
        while True:
            at += draw.expovariate(VISITS_PER_S / threads)
            if at >= end:
                break
            events.append((at, "visit"))
        for w in range(1, WINDOWS):
            events.append((w * PERIOD + draw.uniform(0.1, PERIOD - 0.1), "read"))
        for at, what in sorted(events):
            if at > me.now():
                me.sleep(at - me.now())
            if what == "visit":
                counter.increment()
                with record:
                    visits.append(me.now())
                continue
            now = me.now()
            window = math.floor(now / PERIOD)
            with record:
                want = sum(1 for v in visits if math.floor(v / PERIOD) == window - 1)
            got = counter.value()
            if got != want:
                wrong.append(f"t{i} read {got} at {now:.3f}: window {window - 1} had {want} visits")
                me.fail(wrong[-1])
        c.close()
        me.close()

    run_participants(worker, threads)
    if wrong:
        print(wrong[0], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
