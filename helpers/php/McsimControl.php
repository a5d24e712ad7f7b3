<?php
// What a PHP program under `mcsim test` may tell mcsim, beside its memcached commands
// (php-memcached, text or binary protocol):
//
//     require __DIR__ . '/McsimControl.php';
//     $me = new McsimParticipant('t0');
//     $m = new Memcached(); $m->addServer(...mcsim_servers()[0]);
//     $m->get($me->nameKey);        // takes this client's connection into the schedule
//     $me->enter('section');        // mcsim fails the run if another is inside
//     $me->sleep(0.5);              // half a second of the servers' virtual time
//     $me->leave('section');
//     $me->fail('the counter lost an increment');
//
// Each participant talks to mcsim on a connection of its own, one line at a time. Outside
// `mcsim test` (no MCSIM_EXECUTION: the same program against a real memcached at
// MCSIM_SERVERS, 127.0.0.1:11211 by default) it says nothing and sleeps in real time.

/** The servers of this run (MCSIM_SERVERS), each as [host, port], the first first. */
function mcsim_servers(): array {
    $out = [];
    foreach (explode(',', getenv('MCSIM_SERVERS') ?: '127.0.0.1:11211') as $entry) {
        $at = strrpos($entry, ':');
        $out[] = [substr($entry, 0, $at), (int) substr($entry, $at + 1)];
    }
    return $out;
}

/** How many participants the run waits for (MCSIM_CLIENTS). */
function mcsim_clients(): int {
    return (int) (getenv('MCSIM_CLIENTS') ?: 1);
}

/** One participant's link to mcsim. */
class McsimParticipant {
    /** The key whose read, in any form, names a client's connection after this participant. */
    public string $nameKey;
    private $socket = null;

    public function __construct(public string $name) {
        $this->nameKey = "mcsim:name:$name";
        if (getenv('MCSIM_EXECUTION') !== false) {
            [$host, $port] = mcsim_servers()[0];
            $this->socket = fsockopen($host, $port);
            if ($this->socket === false) {
                throw new RuntimeException("mcsim: cannot connect to $host:$port");
            }
        }
    }

    private function say(string $line): string {
        if ($this->socket === null) {
            return 'OK';
        }
        fwrite($this->socket, "mcsim $line\r\n");
        $reply = trim((string) fgets($this->socket));
        if (strpos($reply, 'OK') !== 0) {
            throw new RuntimeException("mcsim $line: " . ($reply ?: 'the connection closed'));
        }
        return $reply;
    }

    /** Entered `$section`: another participant inside fails the run. */
    public function enter(string $section): void { $this->say("enter $section {$this->name}"); }

    public function leave(string $section): void { $this->say("leave $section {$this->name}"); }

    /** Waits `$seconds` of the servers' virtual time (real time outside mcsim). */
    public function sleep(float $seconds): void {
        if ($this->socket === null) {
            usleep((int) round($seconds * 1e6));
            return;
        }
        $ms = (int) round($seconds * 1000);
        $this->say("sleep $ms {$this->name}");
    }

    /** The run fails with `$message` (the program may go on). */
    public function fail(string $message): void {
        $this->say('fail ' . preg_replace('/\s+/', ' ', $message));
    }

    /** A figure of the run, summed up over runs. */
    public function metric(string $name, float $value): void { $this->say("metric $name $value"); }

    /** The danger `$name` happened in this run. */
    public function sometimes(string $name): void { $this->say("sometimes $name"); }

    public function close(): void {
        if ($this->socket !== null) {
            fclose($this->socket);
            $this->socket = null;
        }
    }
}
