<?php
// A counter in PHP through php-memcached, for `mcsim test`:
//
//     mcsim test --clients 3 -- php examples/php-recipes/counter.php incr-add|incr-retry [text|binary] [INCREMENTS]
//
// The program forks MCSIM_CLIENTS workers; each increments a shared counter INCREMENTS
// times (3 by default) with memcached's atomic `incr`, creating it with `add` (which one
// worker wins) when it is not there yet. The program exits 1 if the counter does not hold
// the number of increments made. `incr-add` treats an error as a miss of nothing: the
// increment is lost if its command failed (and counted anyway if it reached the server).
// `incr-retry` makes an increment again when its reply did not come: under `--lose-reply`
// an increment that had reached the server counts twice.

require __DIR__ . '/../../helpers/php/McsimControl.php';

/** One increment; false if a command failed (a lost reply breaks the connection). */
function increment(Memcached $m): bool {
    while (true) {
        if ($m->increment('views') !== false) {
            return true;
        }
        if ($m->getResultCode() !== Memcached::RES_NOTFOUND) {
            return false;
        }
        if ($m->add('views', '1')) {
            return true;
        }
        // Another worker created it first (NOT_STORED in text, "exists" in binary).
        $code = $m->getResultCode();
        if ($code !== Memcached::RES_NOTSTORED && $code !== Memcached::RES_DATA_EXISTS) {
            return false;
        }
    }
}

$variant = $argv[1] ?? 'incr-add';
$binary = ($argv[2] ?? 'text') === 'binary';
$increments = (int) ($argv[3] ?? 3);
$workers = mcsim_clients();

mcsim_run_participants($workers, function (int $i) use ($variant, $binary, $increments): void {
    $me = new McsimParticipant("t$i");
    $m = mcsim_memcached($binary);
    $m->get($me->nameKey);
    for ($k = 0; $k < $increments; $k++) {
        while (!increment($m) && $variant === 'incr-retry') {
        }
    }
    $m->quit();
    $me->close();
});

$check = mcsim_memcached($binary);
$value = (int) ($check->get('views') ?: 0);
$check->quit();
$want = $workers * $increments;
if ($value !== $want) {
    $what = $value < $want ? 'lost increments' : 'increments counted twice';
    fwrite(STDERR, "$what: the counter holds $value, $want were made\n");
    exit(1);
}
exit(0);
