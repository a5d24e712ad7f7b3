<?php
// Two locks kept in memcached, in PHP through php-memcached, with mcsim's helper installed
// by Composer (`mcsim/control`, autoloaded):
//
//     composer install
//     mcsim test --clients 3 -- php lock.php get-set   # FAILED: exclusion of section broken
//     mcsim test --clients 3 -- php lock.php add       # passed
//
// Each of MCSIM_CLIENTS forked workers takes the lock `lock_x` twice and says when it
// enters and leaves the section (mcsim fails the run if two are inside at once).
// `get-set` checks that the key is missing, then sets it: two workers can both find it
// missing. `add` takes it with `add`, which memcached lets one win.

require __DIR__ . '/vendor/autoload.php';

function acquire(Memcached $m, string $variant, string $owner): bool {
    if ($variant === 'add') {
        return $m->add('lock_x', $owner, 5);
    }
    if ($m->get('lock_x') !== false) {
        return false;
    }
    return $m->set('lock_x', $owner, 5);
}

$variant = $argv[1] ?? '';
if ($variant !== 'get-set' && $variant !== 'add') {
    fwrite(STDERR, "usage: php lock.php get-set|add\n");
    exit(2);
}
mcsim_run_participants(mcsim_clients(), function (int $i) use ($variant): void {
    $me = new McsimParticipant("t$i");
    $m = mcsim_memcached();
    $m->get($me->nameKey);
    for ($round = 0; $round < 2; $round++) {
        while (!acquire($m, $variant, $me->name)) {
            $me->sleep(0.01);
        }
        $me->enter('section');
        $m->set('work', $me->name);
        $me->leave('section');
        $m->delete('lock_x');
    }
    $m->quit();
    $me->close();
});
