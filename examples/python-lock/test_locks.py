"""Three threads take a lock around a critical section; `mcsim serve` interleaves their
commands in an order drawn from its seed (lockstep), and can pause a holder past its TTL.

Exclusion is judged from what the server saw: inside the section each thread appends
`+name` then `-name` to a log key, and two entries without the exit between them are a
violation, whatever the threads' own clocks say.
"""

import threading

import pytest

from pymemcache.client.base import Client

from locks import AddLock, GetSetLock, overlaps

THREADS = 3
ROUNDS = 2


def run(serve, lock_class, pause_holder: bool = False, noreply: bool = False) -> list[str]:
    """Runs the threads against `serve`; the exclusion violations in the log."""
    setup = Client(("127.0.0.1", serve.port))
    setup.set("log", "", noreply=False)
    setup.close()

    def worker(i: int) -> None:
        name = f"t{i}"
        c = Client(("127.0.0.1", serve.port))
        c.get(f"mcsim:name:{name}")  # takes part in lockstep under this name (--name-key)
        lock = lock_class(c, "section", name, noreply=noreply)
        for r in range(ROUNDS):
            if not lock.acquire():
                continue
            if pause_holder and i == 0 and r == 0:
                # The holder stalls (a GC pause, a slow disk) past the lock's TTL.
                serve.control("advance 6")
            c.append("log", f"+{name} ", noreply=noreply)
            c.append("log", f"-{name} ", noreply=noreply)
            lock.release()
        c.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check = Client(("127.0.0.1", serve.port))
    log = check.get("log").decode()
    check.close()
    return overlaps(log)


def test_get_set_lock_breaks_exclusion_and_its_seed_reproduces_it(serve):
    found = None
    for seed in range(20):
        s = serve("--lockstep", str(THREADS), "--seed", str(seed))
        bad = run(s, GetSetLock)
        trace = s.trace()
        s.stop()
        if bad:
            found = (seed, bad, trace)
            break
    assert found, "no seed of 20 broke the get+set lock"
    seed, bad, trace = found
    again = serve("--lockstep", str(THREADS), "--seed", str(seed))
    assert run(again, GetSetLock) == bad
    assert again.trace() == trace, "the same seed gives the same trace"


def test_add_lock_holds_without_faults(serve):
    for seed in range(5):
        s = serve("--lockstep", str(THREADS), "--seed", str(seed))
        assert run(s, AddLock) == [], f"seed {seed}"
        s.stop()


def test_add_lock_breaks_when_its_holder_pauses_past_the_ttl(serve):
    broken = []
    for seed in range(5):
        s = serve("--lockstep", str(THREADS), "--seed", str(seed))
        broken.append(bool(run(s, AddLock, pause_holder=True)))
        s.stop()
    assert any(broken), "a holder paused past its TTL never lost the lock to another"


@pytest.mark.parametrize("noreply", [False, True])
def test_the_same_seed_gives_the_same_trace_with_and_without_noreply(serve, noreply):
    """pymemcache sends storage commands with `noreply` by default: the client goes on
    without waiting, and lockstep must still release commands in the seed's order."""
    for seed in range(10):
        runs = []
        for _ in range(2):
            s = serve("--lockstep", str(THREADS), "--seed", str(seed))
            bad = run(s, GetSetLock, noreply=noreply)
            runs.append((bad, s.trace()))
            s.stop()
        assert runs[0] == runs[1], f"seed {seed}, noreply={noreply}"
