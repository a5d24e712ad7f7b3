"""The get+set lock of `scenarios/lock-get-set.toml`, as a program: each of MCSIM_CLIENTS
threads takes the lock `lock_x` twice (`get`, then `set` with a 10 s TTL when it was
missing, backing off 1 ms while it is held), stays inside the section 5 ms of virtual
time and releases it with `delete`; mcsim judges the exclusion from `enter`/`leave`. Two
threads that both read the lock missing are inside at once: `mcsim test` finds it and
shrinks it as small as `mcsim run` shrinks the scenario's counterexample."""

from pymemcache.client.base import Client

from mcsim_control import Participant, run_participants, servers

ROUNDS, ATTEMPTS = 2, 20


def worker(i: int) -> None:
    me = Participant(f"t{i}")
    c = Client(servers()[0])
    c.get(me.name_key)
    for _ in range(ROUNDS):
        for _ in range(ATTEMPTS):
            if c.get("lock_x") is None:
                c.set("lock_x", "1", expire=10, noreply=False)
                break
            me.sleep(0.001)
        else:
            continue
        me.enter("section")
        me.sleep(0.005)
        me.leave("section")
        c.delete("lock_x", noreply=False)
    c.close()
    me.close()


run_participants(worker)
