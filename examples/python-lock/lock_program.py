"""A program as a user has it, for `mcsim test`: threads take a lock around a critical
section and the program fails (exit 1) if two were ever inside at once.

    mcsim test --clients 3 -- python3 examples/python-lock/lock_program.py get-set [CLIENT]

It reads the servers from MCSIM_SERVERS and the number of threads from MCSIM_CLIENTS;
each thread names itself with a read of `mcsim:name:` + its name, which takes it into
mcsim's schedule, and tells mcsim when it enters and leaves the critical section
(`mcsim_control`), so mcsim judges the exclusion too. The lock is `get-set` (check, then take: broken) or `add` (memcached
lets one `add` win: holds). CLIENT is `pymemcache` (the default), `pylibmc` or
`pylibmc-binary` (libmemcached's binary protocol). With `--many` it runs every execution
in one process, asking mcsim for each (`mcsim_control.executions`).
"""

import pathlib
import sys

from locks import AddLock, GetSetLock, overlaps

# mcsim's helper for programs under `mcsim test` (helpers/python in the repository).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "helpers" / "python"))
from mcsim_control import Participant, clients, executions, fail, run_participants, servers  # noqa: E402

ROUNDS = 2


class Pylibmc:
    """pylibmc behind the few calls of pymemcache's that the locks make."""

    def __init__(self, server, binary: bool):
        import pylibmc

        self.c = pylibmc.Client([f"{server[0]}:{server[1]}"], binary=binary)

    def get(self, key):
        value = self.c.get(key)
        return value.encode() if isinstance(value, str) else value

    def set(self, key, value, noreply=False):
        self.c.set(key, value)

    def add(self, key, value, expire=0, noreply=False):
        return self.c.add(key, value, time=expire)

    def append(self, key, value, noreply=False):
        self.c.append(key, value)

    def delete(self, key, noreply=False):
        self.c.delete(key)

    def close(self):
        self.c.disconnect_all()


def connect(kind: str, server):
    if kind == "pymemcache":
        from pymemcache.client.base import Client

        return Client(server)
    return Pylibmc(server, binary=kind == "pylibmc-binary")


def one_execution(kind: str, lock_class, threads: int) -> list[str]:
    """One execution: the threads take the lock in turn; the exclusion violations seen."""
    server = servers()[0]
    setup = connect(kind, server)
    setup.set("log", "", noreply=False)
    setup.close()

    def worker(i: int) -> None:
        name = f"t{i}"
        me = Participant(name)
        c = connect(kind, server)
        c.get(me.name_key)
        lock = lock_class(c, "x", name)
        for _ in range(ROUNDS):
            if lock.acquire():
                me.enter("section")
                c.append("log", f"+{name} ", noreply=False)
                c.append("log", f"-{name} ", noreply=False)
                me.leave("section")
                lock.release()
        c.close()
        me.close()

    run_participants(worker, threads)
    check = connect(kind, server)
    log = (check.get("log") or b"").decode()  # an eviction may have taken it
    check.close()
    return overlaps(log)


def main() -> int:
    lock_class = {"get-set": GetSetLock, "add": AddLock}[sys.argv[1]]
    kind = sys.argv[2] if len(sys.argv) > 2 else "pymemcache"
    if "--many" in sys.argv:
        # Every execution in this one process, asked for one after another.
        for execution in executions():
            bad = one_execution(kind, lock_class, execution.clients)
            if bad:
                fail(f"exclusion broken: {bad[0]}")
        return 0
    bad = one_execution(kind, lock_class, clients())
    if bad:
        print(f"exclusion broken: {bad[0]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
