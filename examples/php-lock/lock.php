<?php
// A lock around a critical section, in PHP through php-memcached, for `mcsim test`:
//
//     mcsim test --clients 3 -- php examples/php-lock/lock.php get-set [binary]
//
// The program forks MCSIM_CLIENTS workers. Each opens its own connection, names it with a
// read of `mcsim:name:` + its name (which takes it into mcsim's schedule), and takes the
// lock twice around a section it declares to mcsim (`mcsim enter` / `mcsim leave`) and
// logs in memcached. `get-set` checks with `get` and takes with `set`: two workers can
// both see the lock free. `add` takes it with `add`, which memcached lets one win. The
// program exits 1 if the log shows two workers inside at once.

const ROUNDS = 2;

function servers(): array {
    [$host, $port] = explode(':', explode(',', getenv('MCSIM_SERVERS'))[0]);
    return [$host, (int) $port];
}

function client(bool $binary): Memcached {
    [$host, $port] = servers();
    $m = new Memcached();
    $m->setOption(Memcached::OPT_BINARY_PROTOCOL, $binary);
    $m->setOption(Memcached::OPT_COMPRESSION, false);
    $m->addServer($host, $port);
    return $m;
}

// What a worker tells mcsim, on a connection of its own (nothing outside `mcsim test`).
class Participant {
    private $socket = null;

    public function __construct(public string $name) {
        if (getenv('MCSIM_EXECUTION') !== false) {
            [$host, $port] = servers();
            $this->socket = fsockopen($host, $port);
        }
    }

    private function say(string $line): void {
        if ($this->socket === null) {
            return;
        }
        fwrite($this->socket, "mcsim $line\r\n");
        $reply = trim(fgets($this->socket));
        if (strpos($reply, 'OK') !== 0) {
            throw new RuntimeException("mcsim $line: $reply");
        }
    }

    public function enter(string $section): void { $this->say("enter $section {$this->name}"); }
    public function leave(string $section): void { $this->say("leave $section {$this->name}"); }
}

function acquire(Memcached $m, string $variant, string $owner): bool {
    for ($attempt = 0; $attempt < 20; $attempt++) {
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

function worker(int $i, string $variant, bool $binary): void {
    $name = "t$i";
    $me = new Participant($name);
    $m = client($binary);
    $m->get("mcsim:name:$name");
    for ($r = 0; $r < ROUNDS; $r++) {
        if (acquire($m, $variant, $name)) {
            $me->enter('section');
            $m->append('log', "+$name ");
            $m->append('log', "-$name ");
            $me->leave('section');
            $m->delete('lock:section');
        }
    }
    $m->quit();
}

$variant = $argv[1] ?? 'get-set';
$binary = ($argv[2] ?? 'text') === 'binary';
$workers = (int) (getenv('MCSIM_CLIENTS') ?: 3);

$setup = client($binary);
$setup->set('log', '');
$setup->quit();

$children = [];
for ($i = 0; $i < $workers; $i++) {
    $pid = pcntl_fork();
    if ($pid === 0) {
        worker($i, $variant, $binary);
        exit(0);
    }
    $children[] = $pid;
}
foreach ($children as $pid) {
    pcntl_waitpid($pid, $status);
}

$check = client($binary);
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
