"""What a program under `mcsim test` may tell mcsim, beside its memcached commands.

    from mcsim_control import Participant, servers

    host, port = servers()[0]
    me = Participant("t0")
    client.get(me.name_key)       # takes this client's connection into the schedule
    me.enter("section")           # mcsim fails the run if another is inside
    me.leave("section")
    me.fail("the counter lost an increment")
    me.metric("attempts", 3)      # a figure of the run
    me.sometimes("contended")     # a danger that happened

Each participant talks to mcsim on a connection of its own, one line at a time; mcsim
answers at once, so what it is told keeps the participant's own order. Outside `mcsim
test` (no `MCSIM_EXECUTION`: the same program against a real memcached) it says nothing.
"""

import os
import socket
import threading


def servers() -> list[tuple[str, int]]:
    """The simulated servers of this run (`MCSIM_SERVERS`), the first first."""
    out = []
    for entry in os.environ["MCSIM_SERVERS"].split(","):
        host, port = entry.rsplit(":", 1)
        out.append((host, int(port)))
    return out


def clients() -> int:
    """How many participants the run waits for (`MCSIM_CLIENTS`)."""
    return int(os.environ.get("MCSIM_CLIENTS", "1"))


def run_participants(worker, n: int | None = None) -> None:
    """Runs `worker(i)` on a thread of its own for each participant `i` (`clients()` of
    them unless told) and waits for all."""
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n or clients())]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


class Participant:
    """One participant's link to mcsim."""

    def __init__(self, name: str):
        self.name = name
        #: The key whose read, in any form, names a client's connection `name`.
        self.name_key = f"mcsim:name:{name}"
        self._socket = None
        if "MCSIM_EXECUTION" in os.environ:
            self._socket = socket.create_connection(servers()[0])
            self._replies = self._socket.makefile("rb")

    def _say(self, line: str) -> None:
        if self._socket is None:
            return
        self._socket.sendall(f"mcsim {line}\r\n".encode())
        reply = self._replies.readline().decode().strip()
        if not reply.startswith("OK"):
            raise RuntimeError(f"mcsim {line}: {reply}")

    def enter(self, section: str) -> None:
        """Entered `section`: another participant inside fails the run."""
        self._say(f"enter {section} {self.name}")

    def leave(self, section: str) -> None:
        self._say(f"leave {section} {self.name}")

    def fail(self, message: str) -> None:
        """The run fails with `message` (the program may go on)."""
        self._say(f"fail {message}")

    def metric(self, name: str, value: float) -> None:
        """A figure of the run, summed up over runs (min, mean, max)."""
        self._say(f"metric {name} {value}")

    def sometimes(self, name: str) -> None:
        """The danger `name` happened in this run (`mcsim test --sometimes NAME` requires
        it in some run for a pass to count)."""
        self._say(f"sometimes {name}")

    def close(self) -> None:
        if self._socket is not None:
            self._replies.close()
            self._socket.close()
