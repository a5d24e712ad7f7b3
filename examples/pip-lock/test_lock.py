"""Two locks kept in memcached, as pytest tests for `mcsim test`, with mcsim installed by
pip and nothing else: the `mcsim` fixture comes from the plugin the package registers, and
`mcsim` is on the PATH.

    python3 -m venv venv && venv/bin/pip install PATH/TO/mcsim pymemcache pytest
    venv/bin/mcsim test --clients 3 -- venv/bin/python -m pytest -q test_lock.py::test_add_lock
    venv/bin/mcsim test --clients 3 -- venv/bin/python -m pytest -q test_lock.py::test_get_set_lock   # FAILED

Each participant takes the lock `lock_x` twice and says when it enters and leaves the
section (mcsim fails the execution if two are inside at once). The `get`+`set` lock checks
that the key is missing, then sets it: two participants can both find it missing. The
`add` lock takes it with `add`, which only one can win.
"""

from pymemcache.client.base import Client


def get_set(client, owner: str) -> bool:
    if client.get("lock_x") is not None:
        return False
    client.set("lock_x", owner, expire=5, noreply=False)
    return True


def add(client, owner: str) -> bool:
    return client.add("lock_x", owner, expire=5, noreply=False)


def locking(mcsim, acquire) -> None:
    def worker(i: int) -> None:
        me = mcsim.Participant(f"t{i}")
        c = Client(me.server)
        c.get(me.name_key)
        for _ in range(2):
            while not acquire(c, me.name):
                me.sleep(0.01)
            me.enter("section")
            c.set("work", me.name, noreply=False)
            me.leave("section")
            c.delete("lock_x", noreply=False)
        c.close()
        me.close()

    for execution in mcsim.executions():
        execution.run_participants(worker)


def test_add_lock(mcsim):
    locking(mcsim, add)


def test_get_set_lock(mcsim):
    locking(mcsim, get_set)
