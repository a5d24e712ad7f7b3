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
//     $me->now();                   // seconds since the execution began
//     $me->close();                 // done: mcsim waits for it no more
//
//     mcsim_run_participants(mcsim_clients(), fn (int $i) => worker($i));   // forked
//     foreach (mcsim_executions() as [$run, $seed, $clients]) { ... }        // many in one process
//
// Each participant talks to mcsim on a connection of its own, one line at a time. Outside
// `mcsim test` (no MCSIM_EXECUTION: the same program against a real memcached at
// MCSIM_SERVERS, 127.0.0.1:11211 by default) it says nothing, sleeps in real time, and
// `mcsim_executions()` gives one execution (MCSIM_EXECUTIONS of them if set).

/** True under `mcsim test`. */
function mcsim_under(): bool {
    return getenv('MCSIM_EXECUTION') !== false;
}

/** A line to mcsim for control commands, answered one at a time. */
class McsimLine {
    private $socket;

    public function __construct() {
        [$host, $port] = mcsim_servers()[0];
        $socket = fsockopen($host, $port);
        if ($socket === false) {
            throw new RuntimeException("mcsim: cannot connect to $host:$port");
        }
        $this->socket = $socket;
    }

    /** Sends `mcsim $line`; the reply (`OK …`), or an exception with mcsim's error. */
    public function say(string $line): string {
        fwrite($this->socket, "mcsim $line\r\n");
        $reply = trim((string) fgets($this->socket));
        if (strpos($reply, 'OK') !== 0) {
            throw new RuntimeException("mcsim $line: " . ($reply ?: 'the connection closed'));
        }
        return $reply;
    }

    public function close(): void {
        fclose($this->socket);
    }
}

/** Outside `mcsim test`: when the execution began, for McsimParticipant::now. */
$GLOBALS['mcsim_began'] = microtime(true);

/** The run fails with `$message` (the program may go on). */
function mcsim_fail(string $message): void {
    if (mcsim_under()) {
        $line = new McsimLine();
        $line->say('fail ' . preg_replace('/\s+/', ' ', $message));
        $line->close();
    }
}

/**
 * Runs `$worker($i)` in a forked process for each participant `$i` < `$n` and waits for
 * all. A worker that throws fails the run, named with its participant; a worker that
 * exits non-zero fails it too.
 */
function mcsim_run_participants(int $n, callable $worker): void {
    $children = [];
    for ($i = 0; $i < $n; $i++) {
        $pid = pcntl_fork();
        if ($pid === -1) {
            throw new RuntimeException('mcsim: cannot fork a participant');
        }
        if ($pid === 0) {
            $code = 0;
            try {
                $worker($i);
            } catch (Throwable $e) {
                fwrite(STDERR, (string) $e . "\n");
                mcsim_fail("participant $i raised " . get_class($e) . ': ' . $e->getMessage());
                $code = 1;
            }
            // Its participants' destructors say they are done.
            exit($code);
        }
        $children[] = $pid;
    }
    foreach ($children as $i => $pid) {
        pcntl_waitpid($pid, $status);
        if (!pcntl_wifexited($status) || pcntl_wexitstatus($status) !== 0) {
            mcsim_fail("participant $i exited badly (status $status)");
        }
    }
}

/**
 * Each execution mcsim gives this process, the servers reset before each (`mcsim
 * next`), as [run, seed, clients], until mcsim has what it needs; then, if an execution
 * failed, an exception. Outside `mcsim test`, MCSIM_EXECUTIONS executions (1 by default).
 */
function mcsim_executions(): Generator {
    if (!mcsim_under()) {
        $n = (int) (getenv('MCSIM_EXECUTIONS') ?: 1);
        for ($run = 0; $run < $n; $run++) {
            $GLOBALS['mcsim_began'] = microtime(true);
            yield [$run, 0, mcsim_clients()];
        }
        return;
    }
    $control = new McsimLine();
    try {
        while (true) {
            $words = explode(' ', $control->say('next'));
            if ($words[1] === 'done') {
                if (($words[2] ?? '') === 'fail') {
                    throw new RuntimeException('mcsim test found a failing execution: see its report');
                }
                return;
            }
            $given = [];
            for ($k = 1; $k + 1 < count($words); $k += 2) {
                $given[$words[$k]] = (int) $words[$k + 1];
            }
            yield [$given['run'], $given['seed'], $given['clients']];
        }
    } finally {
        $control->close();
    }
}

/** The servers of this run (MCSIM_SERVERS), each as [host, port], the first first. */
function mcsim_servers(): array {
    $out = [];
    foreach (explode(',', getenv('MCSIM_SERVERS') ?: '127.0.0.1:11211') as $entry) {
        $at = strrpos($entry, ':');
        $out[] = [substr($entry, 0, $at), (int) substr($entry, $at + 1)];
    }
    return $out;
}

/**
 * A php-memcached client of the run's first server, in the binary protocol or the text
 * one, without compression (so the values mcsim shows are the ones written).
 */
function mcsim_memcached(bool $binary = false): Memcached {
    [$host, $port] = mcsim_servers()[0];
    $m = new Memcached();
    $m->setOption(Memcached::OPT_BINARY_PROTOCOL, $binary);
    $m->setOption(Memcached::OPT_COMPRESSION, false);
    $m->addServer($host, $port);
    return $m;
}

/** How many participants the run waits for (MCSIM_CLIENTS). */
function mcsim_clients(): int {
    return (int) (getenv('MCSIM_CLIENTS') ?: 1);
}

/** One participant's link to mcsim. */
class McsimParticipant {
    /** The key whose read, in any form, names a client's connection after this participant. */
    public string $nameKey;
    private ?McsimLine $line = null;

    public function __construct(public string $name) {
        if ($name === '' || preg_match('/\s/', $name) || strlen($name) > 200) {
            throw new InvalidArgumentException("a participant's name is one word (no spaces): '$name'");
        }
        $this->nameKey = "mcsim:name:$name";
        if (mcsim_under()) {
            $this->line = new McsimLine();
        }
    }

    private function say(string $line): string {
        return $this->line === null ? 'OK' : $this->line->say($line);
    }

    /** Entered `$section`: another participant inside fails the run. */
    public function enter(string $section): void { $this->say("enter $section {$this->name}"); }

    public function leave(string $section): void { $this->say("leave $section {$this->name}"); }

    /** Waits `$seconds` of the servers' virtual time (real time outside mcsim). */
    public function sleep(float $seconds): void {
        if ($this->line === null) {
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

    /**
     * Seconds since the execution began: on the servers' virtual clock under `mcsim test`
     * (from 0 at each execution's start), on the real clock outside it (from the
     * execution's start too).
     */
    public function now(): float {
        if ($this->line === null) {
            return microtime(true) - $GLOBALS['mcsim_began'];
        }
        return (float) explode(' ', $this->say('time'))[1];
    }

    /** The participant is done: mcsim waits for it no more (after an error broke its connection, say). */
    public function close(): void {
        if ($this->line !== null) {
            try {
                $this->line->say("done {$this->name}");
            } finally {
                $this->line->close();
                $this->line = null;
            }
        }
    }

    public function __destruct() {
        $this->close();
    }
}
