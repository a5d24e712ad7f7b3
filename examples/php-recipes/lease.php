<?php
// A leader lease in PHP through php-memcached, for `mcsim test`:
//
//     mcsim test --clients 3 --pause 0.02 --pause-ms 6000 -- php examples/php-recipes/lease.php touch|checked [text|binary]
//     mcsim test --clients 3 --lose-reply 0.02 -- php examples/php-recipes/lease.php checked binary
//
// The program forks MCSIM_CLIENTS workers that compete for a leader lease for ten
// seconds of virtual time. A worker that leads works for half a second inside the section
// `leader`, then renews its lease; one that does not tries to take it (`add`) every half
// second. Two workers inside `leader` at once fail the run.
//
// `touch` is the lease as commonly written: it renews with `touch` and leads while its
// last `add` or `touch` succeeded. `touch` renews the key whoever holds it, so a leader
// that stalled past the key's TTL renews its successor's lease and both lead.
// `checked` renews only its own lease (a read with its CAS token, then `cas` with its own
// value) and leads only until the lease must still be alive: the TTL counted from before
// the command was sent, less the second memcached's clock may round away. An error counts
// as not leading; an `add` whose reply was lost is found when the next attempt reads the
// key back.

require __DIR__ . '/../../helpers/php/McsimControl.php';

const TTL = 3;          // seconds the lease key lives
const WORK = 0.5;       // seconds a leader works between renewals
const RETRY = 0.5;      // seconds between a follower's attempts
const DURATION = 10.0;  // seconds each worker runs

/** The lease of one worker; `$until` is when it surely expires, if this worker holds it. */
final class Lease {
    private ?float $until = null;
    private bool $leading = false;

    public function __construct(
        private Memcached $m,
        private McsimParticipant $me,
        private bool $checked,
    ) {}

    /** True if this worker may act as the leader for the next `$seconds`. */
    public function leads(float $seconds): bool {
        if (!$this->checked) {
            return $this->leading;
        }
        return $this->until !== null && $this->me->now() + $seconds <= $this->until;
    }

    public function acquire(): void {
        $sent = $this->me->now();
        if ($this->m->add('leader', $this->me->name, TTL)) {
            $this->leading = true;
            $this->until = $sent + TTL - 1;
            return;
        }
        $this->leading = false;
        $this->until = null;
        // Taken by another worker, or by this one whose earlier `add` lost its reply.
        $code = $this->m->getResultCode();
        $taken = $code === Memcached::RES_NOTSTORED || $code === Memcached::RES_DATA_EXISTS;
        if ($this->checked && $taken) {
            $this->renew();
        }
    }

    public function renew(): void {
        $sent = $this->me->now();
        if (!$this->checked) {
            $this->leading = $this->m->touch('leader', TTL);
            return;
        }
        $this->until = null;
        $got = $this->m->get('leader', null, Memcached::GET_EXTENDED);
        if ($got === false || $got['value'] !== $this->me->name) {
            return;
        }
        if ($this->m->cas($got['cas'], 'leader', $this->me->name, TTL)) {
            $this->until = $sent + TTL - 1;
        }
    }
}

$checked = ($argv[1] ?? 'touch') === 'checked';
$binary = ($argv[2] ?? 'text') === 'binary';

mcsim_run_participants(mcsim_clients(), function (int $i) use ($checked, $binary): void {
    $me = new McsimParticipant("t$i");
    $m = mcsim_memcached($binary);
    $m->get($me->nameKey);
    $lease = new Lease($m, $me, $checked);
    while ($me->now() < DURATION) {
        if ($lease->leads(WORK)) {
            $me->enter('leader');
            $me->sleep(WORK);
            $me->leave('leader');
            $lease->renew();
        } else {
            $lease->acquire();
            if (!$lease->leads(WORK)) {
                $me->sleep(RETRY);
            }
        }
    }
    $m->quit();
    $me->close();
});
exit(0);
