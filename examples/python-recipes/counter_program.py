"""A program for `mcsim test`: MCSIM_CLIENTS threads each increment a shared counter
INCREMENTS times; the program fails (exit 1) if the final value is not the number of
increments made.

    mcsim test --clients 3 -- python3 counter_program.py get-set 1
    mcsim test --clients 3 -- python3 counter_program.py incr-add 3
    mcsim test --clients 3 --lose-reply 0.02 -- python3 counter_program.py incr-retry 3

Under `--lose-reply` a reply lost breaks the client's connection: `incr-add` raises (the
run fails, naming the thread and the error), `incr-retry` reconnects and increments again,
and counts an increment twice when its first one had reached the server.
"""

import os
import pathlib
import sys

from pymemcache.client.base import Client

from recipes.counter import GetSetCounter, IncrAddCounter, RetryingCounter

# mcsim's helper for programs under `mcsim test` (helpers/python in the repository).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "helpers" / "python"))
from mcsim_control import Participant, run_participants  # noqa: E402


def main() -> int:
    host, port = os.environ["MCSIM_SERVERS"].split(",")[0].rsplit(":", 1)
    server = (host, int(port))
    threads = int(os.environ.get("MCSIM_CLIENTS", "3"))
    counter_class = {
        "get-set": GetSetCounter,
        "incr-add": IncrAddCounter,
        "incr-retry": RetryingCounter,
    }[sys.argv[1]]
    increments = int(sys.argv[2]) if len(sys.argv) > 2 else 1

    def worker(i: int) -> None:
        me = Participant(f"t{i}")
        c = Client(server)
        c.get(me.name_key)
        counter = counter_class(c, "views")
        for _ in range(increments):
            counter.increment()
        c.close()
        me.close()

    run_participants(worker, threads)
    check = Client(server)
    value = counter_class(check, "views").value()
    check.close()
    want = threads * increments
    if value != want:
        what = "lost increments" if value < want else "increments counted twice"
        print(f"{what}: the counter holds {value}, {want} were made", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
