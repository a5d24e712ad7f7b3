"""Steps that commute, for `mcsim test --exhaustive`: each of MCSIM_CLIENTS threads counts
on a key of its own (`set` to 0, then three `incr`) and reads the key `config`, which no
one writes. Every pair of steps of two threads touches different keys or only reads, so
every order gives the same outcome: the reduced search runs one order and cuts the
others short, where `--no-reduction` runs each.

    mcsim test --clients 2 --exhaustive -- python3 own_counters.py
"""

from pymemcache.client.base import Client

from mcsim_control import Participant, fail, run_participants, servers


def worker(i: int) -> None:
    name = f"t{i}"
    me = Participant(name)
    c = Client(servers()[0])
    c.get(me.name_key)
    key = f"count_{name}"
    c.set(key, "0", noreply=False)
    for _ in range(3):
        c.incr(key, 1)
    c.get("config")
    if c.get(key) != b"3":
        fail(f"{name} counted {c.get(key)!r}")
    c.close()


if __name__ == "__main__":
    run_participants(worker)
