"""A program for `mcsim test`: MCSIM_CLIENTS threads compete for a leader lease for ten
seconds of virtual time. A thread that leads works for half a second inside the section
`leader`, then renews its lease; one that does not tries to take it every half second.
Two threads inside `leader` at once fail the run.

    mcsim test --clients 3 --pause 0.02 --pause-ms 6000 -- python3 lease_program.py touch
    mcsim test --clients 3 --pause 0.02 --pause-ms 6000 -- python3 lease_program.py checked
    mcsim test --clients 3 --lose-reply 0.02 -- python3 lease_program.py checked

Under a pause longer than the lease's TTL, `touch` renews the successor's lease for the
leader that stalled, and both lead. `checked` renews only its own lease and leads only
while the lease must still be alive; a lost reply leaves it not leading until it reads
its own lease back.
"""

import os
import pathlib
import sys

from pymemcache.client.base import Client

from recipes.lease import CheckedLease, TouchLease

# mcsim's helper for programs under `mcsim test` (helpers/python in the repository).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "helpers" / "python"))
from mcsim_control import Participant, run_participants  # noqa: E402

TTL = 3  # seconds the lease key lives
WORK = 0.5  # seconds a leader works between renewals
RETRY = 0.5  # seconds between a follower's attempts
DURATION = 10.0  # seconds each thread runs


def main() -> int:
    host, port = os.environ["MCSIM_SERVERS"].split(",")[0].rsplit(":", 1)
    server = (host, int(port))
    threads = int(os.environ.get("MCSIM_CLIENTS", "3"))
    lease_class = {"touch": TouchLease, "checked": CheckedLease}[sys.argv[1]]

    def worker(i: int) -> None:
        me = Participant(f"t{i}")
        c = Client(server)
        c.get(me.name_key)
        lease = lease_class(c, "leader", me.name, TTL, me.now)
        while me.now() < DURATION:
            if lease.leads(WORK):
                me.enter("leader")
                me.sleep(WORK)
                me.leave("leader")
                lease.renew()
            else:
                lease.acquire()
                if not lease.leads(WORK):
                    me.sleep(RETRY)
        c.close()
        me.close()

    run_participants(worker, threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
