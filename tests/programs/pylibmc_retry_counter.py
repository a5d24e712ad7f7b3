"""The retrying counter through pylibmc (libmemcached), for `mcsim test`: MCSIM_CLIENTS
threads each make 3 increments with `incr` (creating the key with `add`), and make one
again when the client reports an error. Under `--lose-reply` the connection breaks after
the server applied the increment; libmemcached reconnects on its own, and the increment
made again counts twice. The program exits 1 if the counter is not 3 per thread.

    mcsim test --clients 3 --lose-reply 0.05 -- python3 pylibmc_retry_counter.py text|binary
"""

import sys

import pylibmc

from mcsim_control import Participant, clients, run_participants, servers

BINARY = sys.argv[1] == "binary"
HOST, PORT = servers()[0]


def connect():
    return pylibmc.Client([f"{HOST}:{PORT}"], binary=BINARY)


def increment(c) -> None:
    while True:
        try:
            try:
                c.incr("n")
            except pylibmc.NotFound:
                if not c.add("n", "1"):
                    continue
            return
        except pylibmc.Error:
            pass  # the reply did not come: make the increment again


def worker(i: int) -> None:
    me = Participant(f"t{i}")
    c = connect()
    c.get(me.name_key)
    for _ in range(3):
        increment(c)
    c.disconnect_all()
    me.close()


run_participants(worker)
value = int(connect().get("n") or 0)
if value != 3 * clients():
    print(f"the counter holds {value}, {3 * clients()} increments were made", file=sys.stderr)
    sys.exit(1)
