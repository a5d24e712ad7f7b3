"""The `add` lock with a client that spreads its keys over every server, as pymemcache's
HashClient does, and drops a server from its list at the first connection error
(`retry_attempts=0`; a failed call answers as a miss, `ignore_exc=True`), for `mcsim test
--scenario scenarios/lock-add-node-leave.toml`: each of MCSIM_CLIENTS threads takes the
lock `lock_x` twice (`add` with a 10 s TTL, trying again every 5 ms), holds it 20 ms of
virtual time inside the section `section`, and releases it with `delete`.

When the server holding the lock leaves, a waiter's next `add` meets the closed
connection, then a refused one; its client drops that server, `lock_x` maps to another
server, and the waiter's `add` wins there while the holder is still inside.

    mcsim test --clients 3 --scenario scenarios/lock-add-node-leave.toml -- python3 hash_add_lock.py
"""

from pymemcache.client.hash import HashClient

from mcsim_control import Participant, run_participants, servers


def worker(i: int) -> None:
    name = f"t{i}"
    me = Participant(name)
    # A server dropped stays out for the run (its dead_timeout is in real seconds).
    c = HashClient(servers(), retry_attempts=0, dead_timeout=3600, ignore_exc=True)
    # One connection to each server, each named: all of them are this participant's.
    for server in c.clients.values():
        server.get(me.name_key)
    for _ in range(2):
        while not c.add("lock_x", name, expire=10, noreply=False):
            me.sleep(0.005)
        me.enter("section")
        me.sleep(0.02)
        me.leave("section")
        c.delete("lock_x", noreply=False)
    c.close()
    me.close()


run_participants(worker)
