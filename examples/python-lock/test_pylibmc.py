"""The get+set lock through pylibmc (libmemcached), in the text and the binary protocol.

pylibmc sends only memcached commands, so each thread names itself with a read of
`mcsim:name:` + its name (`--name-key`): libmemcached sends that read as `get` in text
and as a binary GETK, and both join the lockstep. The same seed must then give the same
interleaving and the same trace every time, whatever the threads' timing.
"""

import threading

import pytest

from locks import overlaps

pylibmc = pytest.importorskip("pylibmc")

THREADS = 3
ROUNDS = 2


class GetSetLock:
    """Checks with `get`, takes with `set`: two threads can both see it free."""

    def __init__(self, client, name: str, owner: str):
        self.client, self.key, self.owner = client, f"lock:{name}", owner

    def acquire(self, attempts: int = 20) -> bool:
        for _ in range(attempts):
            if self.client.get(self.key) is None:
                self.client.set(self.key, self.owner)
                return True
        return False

    def release(self) -> None:
        self.client.delete(self.key)


def client(serve, binary: bool):
    return pylibmc.Client([f"127.0.0.1:{serve.port}"], binary=binary)


def run(serve, binary: bool) -> tuple[str, str]:
    """The threads' log of entries and exits, as the server holds it at the end, and the
    trace up to the read of it (taken before the reading client says goodbye, whose
    `quit` nothing orders against the trace's own read)."""
    setup = client(serve, binary)
    setup.set("log", "")
    setup.disconnect_all()

    def worker(i: int) -> None:
        name = f"t{i}"
        c = client(serve, binary)
        c.get(f"mcsim:name:{name}")  # joins the lockstep under this name
        lock = GetSetLock(c, "section", name)
        for _ in range(ROUNDS):
            if lock.acquire():
                c.append("log", f"+{name} ")
                c.append("log", f"-{name} ")
                lock.release()
        c.disconnect_all()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check = client(serve, binary)
    log = check.get("log")
    log = log.decode() if isinstance(log, bytes) else log
    trace = serve.trace()
    check.disconnect_all()
    return log, trace


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_pylibmc_threads_interleave_the_same_way_for_the_same_seed(serve, binary):
    seed = 3
    first = serve("--lockstep", str(THREADS), "--seed", str(seed))
    log, trace = run(first, binary)
    first.stop()
    # Every thread took part: its commands are in the trace under its name.
    for i in range(THREADS):
        assert f"  t{i}  " in trace, trace
    assert "\ufffd" not in trace, "a binary packet traced as raw bytes:\n" + trace
    for again in range(49):
        s = serve("--lockstep", str(THREADS), "--seed", str(seed))
        again_log, again_trace = run(s, binary)
        assert again_log == log, f"run {again + 2}"
        assert again_trace == trace, f"run {again + 2}: another interleaving"
        s.stop()


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_some_seed_breaks_the_pylibmc_get_set_lock(serve, binary):
    for seed in range(20):
        s = serve("--lockstep", str(THREADS), "--seed", str(seed))
        log, _ = run(s, binary)
        s.stop()
        if overlaps(log):
            return
    pytest.fail("no seed of 20 broke the get+set lock")
