"""A program for `mcsim test`: MCSIM_CLIENTS threads each add a member of their own to a
shared set, add and remove a second one and read the set; the program fails (exit 1) if
a thread does not find the member it kept, or the set at the end is not every thread's
kept member.

    mcsim test --clients 3 -- python3 set_program.py as-written   # loses an addition
    mcsim test --clients 3 -- python3 set_program.py retry
"""

import os
import pathlib
import sys

from pymemcache.client.base import Client

from recipes.appendset import AppendSet

# mcsim's helper for programs under `mcsim test` (helpers/python in the repository).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "helpers" / "python"))
from mcsim_control import Participant, run_participants, servers  # noqa: E402


def main() -> int:
    threads = int(os.environ.get("MCSIM_CLIENTS", "3"))
    retry = {"as-written": False, "retry": True}[sys.argv[1]]
    server = servers()[0]
    lost = []

    def worker(i: int) -> None:
        me = Participant(f"t{i}")
        c = Client(server)
        c.get(me.name_key)
        members = AppendSet(c, "members", retry=retry)
        kept, passing = f"m{i}", f"m{i}-gone"
        members.add(kept)
        members.add(passing)
        members.remove(passing)
        if kept not in members.items():
            lost.append(f"t{i} added {kept} and does not find it")
            me.fail(lost[-1])
        c.close()
        me.close()

    run_participants(worker, threads)
    check = Client(server)
    final = AppendSet(check, "members", retry=retry).items()
    check.close()
    want = {f"m{i}" for i in range(threads)}
    if final != want:
        print(f"the set holds {sorted(final)}, {sorted(want)} were left in it", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
