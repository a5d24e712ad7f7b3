"""Starts `mcsim serve` for a test, on a free loopback port, and stops it by its pid; and
takes mcsim's pytest plugin (helpers/python/pytest_mcsim.py: the `mcsim` fixture of the
tests run under `mcsim test`)."""

import os
import pathlib
import socket
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "helpers" / "python"))
pytest_plugins = ["pytest_mcsim"]


def mcsim_binary() -> str:
    explicit = os.environ.get("MCSIM")
    if explicit:
        return explicit
    built = ROOT / "target" / "release" / "mcsim"
    if not built.exists():
        subprocess.run(["cargo", "build", "--release", "--bin", "mcsim"], cwd=ROOT, check=True)
    return str(built)


class Serve:
    """A running `mcsim serve`: its port, control commands, and its trace."""

    def __init__(self, *args: str):
        self.process = subprocess.Popen(
            [mcsim_binary(), "serve", "--port", "0", "--name-key", "mcsim:name:", *args],
            stdout=subprocess.PIPE,
            text=True,
        )
        first = self.process.stdout.readline()
        if not first.startswith("listening on "):
            self.stop()
            raise RuntimeError(f"mcsim serve did not start: {first!r}")
        self.port = int(first.rsplit(":", 1)[1])

    def control(self, command: str) -> str:
        """Sends one `mcsim …` control command; its reply, up to the final line."""
        with socket.create_connection(("127.0.0.1", self.port)) as s:
            s.sendall(f"mcsim {command}\r\n".encode())
            data = b""
            while not (data.endswith(b"END\r\n") or (data.endswith(b"\r\n") and command != "trace")):
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        return data.decode()

    def trace(self) -> str:
        return self.control("trace")

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture
def serve():
    """A factory: serve(*args) starts one; all stop when the test ends."""
    started = []

    def start(*args: str) -> Serve:
        s = Serve(*args)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()
