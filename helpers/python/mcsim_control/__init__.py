"""What a program under `mcsim test` may tell mcsim, beside its memcached commands.

    from mcsim_control import Participant, executions, run_participants

    def worker(i):
        me = Participant(f"t{i}")
        client = Client(me.server)        # pymemcache, pylibmc: any client
        client.get(me.name_key)           # takes this client's connection into the schedule
        me.enter("section")               # mcsim fails the run if another is inside
        me.sleep(0.5)                     # half a second of the servers' virtual time
        me.leave("section")
        me.fail("the counter lost an increment")
        me.metric("attempts", 3)          # a figure of the run
        me.sometimes("contended")         # a danger that happened
        client.close(); me.close()

    for execution in executions():        # many executions in one process
        execution.run_participants(worker)

Each participant talks to mcsim on a connection of its own, one line at a time; mcsim
answers at once, so what it is told keeps the participant's own order. Outside `mcsim
test` (no `MCSIM_EXECUTION`: the same program against a real memcached at
`MCSIM_SERVERS`, 127.0.0.1:11211 by default) it says nothing, sleeps in real time, and
`executions()` gives one execution.
"""

import os
import socket
import threading
import time
import traceback
from dataclasses import dataclass

UNDER_MCSIM = "MCSIM_EXECUTION" in os.environ

# Outside `mcsim test`: when the execution began, for `Participant.now`.
_began = time.monotonic()


def servers() -> list[tuple[str, int]]:
    """The simulated servers of this run (`MCSIM_SERVERS`), the first first."""
    out = []
    for entry in os.environ.get("MCSIM_SERVERS", "127.0.0.1:11211").split(","):
        host, port = entry.rsplit(":", 1)
        out.append((host, int(port)))
    return out


def clients() -> int:
    """How many participants the run waits for (`MCSIM_CLIENTS`)."""
    return int(os.environ.get("MCSIM_CLIENTS", "1"))


class _Line:
    """A connection to mcsim for control lines, answered one at a time."""

    def __init__(self):
        self._socket = socket.create_connection(servers()[0])
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._replies = self._socket.makefile("rb")

    def say(self, line: str) -> str:
        self._socket.sendall(f"mcsim {line}\r\n".encode())
        reply = self._replies.readline().decode().strip()
        if not reply.startswith("OK"):
            raise RuntimeError(f"mcsim {line}: {reply or 'the connection closed'}")
        return reply

    def close(self) -> None:
        self._replies.close()
        self._socket.close()


def fail(message: str) -> None:
    """The run fails with `message` (the program may go on): what a program that runs
    many executions says instead of exiting non-zero."""
    if UNDER_MCSIM:
        line = _Line()
        line.say("fail " + " ".join(message.split()))
        line.close()


# The participants made on each thread (`Participant`), told `done` when the thread's
# worker ends, however it ends.
_mine = threading.local()


def run_participants(worker, n: int | None = None) -> None:
    """Runs `worker(i)` on a thread of its own for each participant `i` (`clients()` of
    them unless told) and waits for all. A worker's exception fails the run, named with
    its participant; either way its participants are done when it ends, so that mcsim
    does not wait for them (after a lost reply, say)."""

    def guarded(i: int) -> None:
        _mine.participants = []
        try:
            worker(i)
        except BaseException as e:  # noqa: BLE001: every exception fails the run
            traceback.print_exc()
            names = ", ".join(p.name for p in _mine.participants) or f"participant {i}"
            detail = f": {e}" if str(e) else ""
            fail(f"{names} raised {type(e).__name__}{detail}")
        finally:
            for p in _mine.participants:
                p.close()

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(n or clients())]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


@dataclass
class Execution:
    """One execution mcsim gives the program: its number, its seed and its participants."""

    number: int
    seed: int
    clients: int

    def run_participants(self, worker) -> None:
        run_participants(worker, self.clients)


class Failed(AssertionError):
    """mcsim test found a failing execution; its report is on mcsim's output."""


def executions():
    """Yields each execution mcsim gives this process, the servers reset before each
    (`mcsim next`), until mcsim has what it needs; then raises `Failed` if an execution
    failed. Outside `mcsim test`, `MCSIM_EXECUTIONS` executions (one by default), each
    against the servers as the last left them. One process runs hundreds of executions
    this way, as a test framework's test does, with no process start for each."""
    global _began
    if not UNDER_MCSIM:
        for number in range(int(os.environ.get("MCSIM_EXECUTIONS", "1"))):
            _began = time.monotonic()
            yield Execution(number, 0, clients())
        return
    control = _Line()
    try:
        while True:
            words = control.say("next").split()
            if words[1] == "done":
                if words[2:3] == ["fail"]:
                    raise Failed("mcsim test found a failing execution: see its report")
                return
            given = dict(zip(words[1::2], words[2::2]))
            yield Execution(int(given["run"]), int(given["seed"]), int(given["clients"]))
    finally:
        control.close()


class Participant:
    """One participant's link to mcsim."""

    def __init__(self, name: str):
        if not name or any(c.isspace() for c in name) or len(name) > 200:
            raise ValueError(f"a participant's name is one word (no spaces): {name!r}")
        self.name = name
        #: The key whose read, in any form, names a client's connection `name`.
        self.name_key = f"mcsim:name:{name}"
        #: The first server's address, as clients take it.
        self.server = servers()[0]
        self._line = _Line() if UNDER_MCSIM else None
        if hasattr(_mine, "participants"):
            _mine.participants.append(self)

    def _say(self, line: str) -> None:
        if self._line is not None:
            self._line.say(line)

    def enter(self, section: str) -> None:
        """Entered `section`: another participant inside fails the run."""
        self._say(f"enter {section} {self.name}")

    def leave(self, section: str) -> None:
        self._say(f"leave {section} {self.name}")

    def sleep(self, seconds: float) -> None:
        """Waits `seconds` of the servers' virtual time (real time outside mcsim): under
        `mcsim test` the time passes when every participant waits, and costs nothing."""
        if self._line is None:
            time.sleep(seconds)
        else:
            self._say(f"sleep {round(seconds * 1000)} {self.name}")

    def now(self) -> float:
        """Seconds since the execution began: on the servers' virtual clock under `mcsim
        test` (from 0 at each execution's start), on a monotonic clock outside it (from
        the execution's start too, so a `while me.now() < 8` loop means the same)."""
        if self._line is None:
            return time.monotonic() - _began
        return float(self._line.say("time").split()[1])

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
        """The participant is done: mcsim no longer waits for its commands (after an
        error broke its connection, say). Closed again, nothing happens."""
        if self._line is not None:
            try:
                self._line.say(f"done {self.name}")
            finally:
                self._line.close()
                self._line = None
