"""The compare bench's program for `mcsim test` (section 12): in every execution the
process is given (`mcsim_control.executions`), MCSIM_CLIENTS threads each make
INCREMENTS increments of one key with memcached's `incr` (creating the key with `add`
when it is missing) and make one again after a client error, as a client that
reconnects does. It judges nothing: it is timed. At the end it prints how many memcached
commands it sent, so that the time a command takes can be worked out outside mcsim too
(`MCSIM_EXECUTIONS=N`, against a real memcached).
"""

import pathlib
import sys
import threading

from pymemcache.client.base import Client

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "helpers" / "python"))
from mcsim_control import Participant, executions  # noqa: E402

INCREMENTS = 10

sent = 0
counting = threading.Lock()


def worker(i: int) -> None:
    global sent
    me = Participant(f"t{i}")
    c = Client(me.server)
    c.get(me.name_key)
    mine = 1
    for _ in range(INCREMENTS):
        while True:
            try:
                mine += 1
                if c.incr("n", 1, noreply=False) is None:
                    mine += 1
                    c.add("n", "1", noreply=False)
                break
            except Exception as e:  # the client's error: make the increment again
                if isinstance(e, (KeyboardInterrupt, SystemExit)):
                    raise
    c.close()
    me.close()
    with counting:
        sent += mine


for execution in executions():
    execution.run_participants(worker)
print(f"commands {sent}")
