"""The locks of `locks.py` as pytest tests for `mcsim test`, each running every execution
it is given in this one process (the `mcsim` fixture of helpers/python/pytest_mcsim.py):

    mcsim test --clients 3 --executions 300 -- \
        python3 -m pytest -q examples/python-lock/test_lock_mcsim.py::test_add_lock

(this folder's conftest.py takes the plugin; elsewhere, put helpers/python on PYTHONPATH
and give pytest `-p pytest_mcsim`).

Each participant takes the lock twice; inside, it tells mcsim it entered and left (mcsim
fails the execution if two are inside at once), writes its name to `owner` and reads it
back (another holder's name there fails the execution too), and may hold the lock a while
of virtual time first (`MCSIM_HOLD_S`), as a slow holder does.
"""

import os

from locks import AddLock, GetSetLock
from pymemcache.client.base import Client

ROUNDS = 2


def locking(mcsim, lock_class) -> None:
    hold = float(os.environ.get("MCSIM_HOLD_S", "0"))

    def worker(i: int) -> None:
        me = mcsim.Participant(f"t{i}")
        c = Client(me.server)
        c.get(me.name_key)
        # Between attempts a taker waits half a second (of virtual time, under mcsim).
        lock = lock_class(c, "section", me.name, wait=lambda: me.sleep(0.5))
        for _ in range(ROUNDS):
            if lock.acquire():
                me.enter("section")
                if hold:
                    me.sleep(hold)
                c.set("owner", me.name, noreply=False)
                owner = c.get("owner")
                if owner != me.name.encode():
                    mcsim.fail(f"{me.name} holds the lock but owner reads {owner!r}")
                me.leave("section")
                lock.release()
        c.close()
        me.close()

    for execution in mcsim.executions():
        execution.run_participants(worker)


def test_add_lock(mcsim):
    locking(mcsim, AddLock)


def test_get_set_lock(mcsim):
    locking(mcsim, GetSetLock)
