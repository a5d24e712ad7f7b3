"""A program for `mcsim test`: the look-aside cache of `scenarios/lookaside-*.toml`.
Thread t0 writes the row twice (1 ms apart: the database updated, then the key deleted);
the other MCSIM_CLIENTS - 1 threads read it twice through the cache (a database read
takes 5 ms and gives the row as it stood when it began), then wait a second and read
once more. That last read began after every write was acknowledged: it must give the
last version, or the run fails (the cache kept an older one: a stale set).

    mcsim test --clients 3 -- python3 lookaside_program.py set        # fails
    mcsim test --clients 3 -- python3 lookaside_program.py add        # fails
    mcsim test --clients 3 -- python3 lookaside_program.py lease-cas  # passes
"""

import os
import pathlib
import sys

from pymemcache.client.base import Client

from recipes.lookaside import FillWithAdd, FillWithSet, LeaseWithCas

# mcsim's helper for programs under `mcsim test` (helpers/python in the repository).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "helpers" / "python"))
from mcsim_control import Participant, fail, run_participants  # noqa: E402

WRITES, READS = 2, 2
INTERVAL, DB_READ, SETTLE = 0.001, 0.005, 1.0


class Database:
    """The row: its version, and whether every write was acknowledged."""

    def __init__(self):
        self.version, self.settled = 0, False


class Reader:
    """A thread's view of the database: a read takes DB_READ of virtual time."""

    def __init__(self, db: Database, me: Participant):
        self.db, self.me = db, me

    def read(self) -> int:
        version = self.db.version
        self.me.sleep(DB_READ)
        return version


def main() -> int:
    host, port = os.environ["MCSIM_SERVERS"].split(",")[0].rsplit(":", 1)
    server = (host, int(port))
    threads = int(os.environ.get("MCSIM_CLIENTS", "3"))
    cache_class = {"set": FillWithSet, "add": FillWithAdd, "lease-cas": LeaseWithCas}[
        sys.argv[1]
    ]
    db = Database()

    def worker(i: int) -> None:
        me = Participant(f"t{i}")
        c = Client(server)
        c.get(me.name_key)
        cache = cache_class(c, "profile")
        if i == 0:
            for _ in range(WRITES):
                me.sleep(INTERVAL)
                db.version += 1
                cache.invalidate()
            db.settled = True
        else:
            reader = Reader(db, me)
            for r in range(READS + 1):
                last = r == READS
                me.sleep(SETTLE if last else INTERVAL)
                judged = last and db.settled
                got, refused = cache.read(reader)
                if refused:
                    me.sometimes("lookaside.fills_refused")
                if judged and got != db.version:
                    fail(f"t{i} read v{got} after every write was acknowledged, the row being v{db.version}")
        c.close()
        me.close()

    run_participants(worker, threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
