<?php
// A lock around a critical section, in PHP through php-memcached, for `mcsim test`:
//
//     mcsim test --clients 3 -- php examples/php-lock/lock.php get-set|add [text|binary] [HOLD_S]
//
// The program forks MCSIM_CLIENTS workers. Each opens its own connection, names it with a
// read of `mcsim:name:` + its name (which takes it into mcsim's schedule), and takes the
// lock twice around a section it declares to mcsim (`mcsim enter` / `mcsim leave`) and
// logs in memcached (helpers/php/McsimControl.php). `get-set` checks with `get` and takes with `set`: two workers can
// both see the lock free. `add` takes it with `add`, which memcached lets one win. The
// program exits 1 if the log shows two workers inside at once. With HOLD_S, a holder keeps
// the lock that many seconds of virtual time and a taker waits half a second between
// attempts: the `add` lock's 5 s TTL holds a 1 s hold and not a 6 s one.

require __DIR__ . '/../../helpers/php/McsimControl.php';

const ROUNDS = 2;

function acquire(Memcached $m, string $variant, string $owner, ?McsimParticipant $waits): bool {
    for ($attempt = 0; $attempt < 20; $attempt++) {
        if ($attempt > 0 && $waits !== null) {
            $waits->sleep(0.5);
        }
        if ($variant === 'add') {
            if ($m->add('lock:section', $owner, 5)) {
                return true;
            }
        } elseif ($m->get('lock:section') === false) {
            $m->set('lock:section', $owner);
            return true;
        }
    }
    return false;
}

function worker(int $i, string $variant, bool $binary, float $hold): void {
    $name = "t$i";
    $me = new McsimParticipant($name);
    $m = mcsim_memcached($binary);
    $m->get($me->nameKey);
    for ($r = 0; $r < ROUNDS; $r++) {
        if (acquire($m, $variant, $name, $hold > 0 ? $me : null)) {
            $me->enter('section');
            if ($hold > 0) {
                $me->sleep($hold);
            }
            $m->append('log', "+$name ");
            $m->append('log', "-$name ");
            $me->leave('section');
            $m->delete('lock:section');
        }
    }
    $m->quit();
    $me->close();
}

$variant = $argv[1] ?? 'get-set';
$binary = ($argv[2] ?? 'text') === 'binary';
$hold = (float) ($argv[3] ?? 0);
$workers = getenv('MCSIM_CLIENTS') !== false ? mcsim_clients() : 3;

$setup = mcsim_memcached($binary);
$setup->set('log', '');
$setup->quit();

$children = [];
for ($i = 0; $i < $workers; $i++) {
    $pid = pcntl_fork();
    if ($pid === 0) {
        worker($i, $variant, $binary, $hold);
        exit(0);
    }
    $children[] = $pid;
}
foreach ($children as $pid) {
    pcntl_waitpid($pid, $status);
}

$check = mcsim_memcached($binary);
$log = $check->get('log') ?: '';
$check->quit();
$inside = null;
foreach (preg_split('/\s+/', trim($log), -1, PREG_SPLIT_NO_EMPTY) as $entry) {
    $who = substr($entry, 1);
    if ($entry[0] === '+') {
        if ($inside !== null) {
            fwrite(STDERR, "exclusion broken: $who entered while $inside was inside\n");
            exit(1);
        }
        $inside = $who;
    } elseif ($inside === $who) {
        $inside = null;
    }
}
exit(0);
