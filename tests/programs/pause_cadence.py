"""Two participants under `mcsim test`: w0 sleeps half a second twelve times, reading a
key after each sleep; w1 is paused six seconds before its first command (`mcsim pause
w1 6000`, armed before the threads start), then writes. A pause holds only the paused
participant: w0 keeps its cadence (each wake half a second after the last), and w1's
command runs six seconds late. The program fails the run otherwise."""

import sys
import threading

from pymemcache.client.base import Client

from mcsim_control import Participant, _Line, servers


def cadence():
    me = Participant("w0")
    client = Client(servers()[0])
    client.get(me.name_key)
    woke = []
    for _ in range(12):
        me.sleep(0.5)
        client.get("k")
        woke.append(me.now())
    gaps = [b - a for a, b in zip(woke, woke[1:])]
    if any(abs(g - 0.5) > 0.01 for g in gaps):
        me.fail(f"w0 lost its cadence: wakes {gaps}")
    client.close()
    me.close()


def paused():
    me = Participant("w1")
    client = Client(servers()[0])
    client.get(me.name_key)
    client.set("k", "w1", noreply=False)
    at = me.now()
    if at < 6.0:
        me.fail(f"w1 was paused 6 s but its command ran at {at}")
    client.close()
    me.close()


control = _Line()
control.say("pause w1 6000")
control.close()
threads = [threading.Thread(target=f) for f in (cadence, paused)]
for t in threads:
    t.start()
for t in threads:
    t.join()
sys.exit(0)
