//! Section 12: `mcsim test` on a real program, side by side with the same program
//! uncontrolled on memcached 1.6.18. What releasing a program's commands one at a time
//! costs (a command's time under `mcsim test` against the same command's time when the
//! program runs freely), the pytest add lock's executions per second, and what a lost
//! reply's reconnect costs. Needs `/usr/bin/python3` with pymemcache and pytest, and a
//! memcached binary; the section says what is missing otherwise.

#[allow(unused_imports)]
use super::*;

use mcsim_real::MemcachedDaemon;

/// The Python the section runs (CI installs pymemcache and pytest for it).
const PYTHON: &str = "/usr/bin/python3";

/// Executions of each `mcsim test` measurement, in one process.
const EXECUTIONS: u64 = 1000;

/// Rounds of the runs with and without lost replies, whose medians are compared.
const ROUNDS: usize = 5;

/// Round trips of the uncontrolled single-client measurement.
const ROUND_TRIPS: u64 = 20_000;

/// One timed run of a program: its wall time and the memcached commands it sent (for
/// `mcsim test`: released in turn), with the faults injected.
struct Timed {
    wall: Duration,
    commands: u64,
    faults: u64,
}

impl Timed {
    fn per_command_us(&self) -> f64 {
        self.wall.as_secs_f64() * 1e6 / self.commands.max(1) as f64
    }
}

/// The run of median wall time.
fn median(mut runs: Vec<Timed>) -> Timed {
    runs.sort_by_key(|t| t.wall);
    runs.swap_remove(runs.len() / 2)
}

fn mcsim_binary() -> PathBuf {
    std::env::current_exe()
        .unwrap_or_default()
        .with_file_name("mcsim")
}

/// `mcsim test --clients 3 --executions N EXTRA -- COMMAND`, timed, with its figures read
/// from its JSON.
fn under_mcsim(extra: &[&str], command: &[&str]) -> Result<Timed, String> {
    let json =
        std::env::temp_dir().join(format!("mcsim-bench-program-{}.json", std::process::id()));
    let executions = EXECUTIONS.to_string();
    let started = Instant::now();
    let out = Command::new(mcsim_binary())
        .current_dir(root())
        .args([
            "test",
            "--clients",
            "3",
            "--executions",
            &executions,
            "--json",
        ])
        .arg(&json)
        .args(extra)
        .arg("--")
        .args(command)
        .output()
        .map_err(|e| format!("cannot run mcsim ({e}): cargo build --release first"))?;
    let wall = started.elapsed();
    if !out.status.success() {
        return Err(format!(
            "`mcsim test {}` did not pass: {}",
            command.join(" "),
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .next()
                .unwrap_or("")
        ));
    }
    let report: serde_json::Value = std::fs::read_to_string(&json)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .ok_or("mcsim test wrote no JSON")?;
    let _ = std::fs::remove_file(&json);
    let number = |k: &str| {
        report
            .get(k)
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0)
    };
    Ok(Timed {
        wall,
        commands: number("commands_released"),
        faults: number("faults_injected"),
    })
}

/// The bench program run freely against `server`, `EXECUTIONS` executions in one process.
fn uncontrolled(server: &str) -> Result<Timed, String> {
    let program = root().join("benches/compare/programs/increments.py");
    let started = Instant::now();
    let out = Command::new(PYTHON)
        .arg(&program)
        .env("MCSIM_SERVERS", server)
        .env("MCSIM_CLIENTS", "3")
        .env("MCSIM_EXECUTIONS", EXECUTIONS.to_string())
        .output()
        .map_err(|e| format!("cannot run {PYTHON}: {e}"))?;
    let wall = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let commands = (stdout.lines())
        .find_map(|l| l.strip_prefix("commands ")?.trim().parse().ok())
        .ok_or_else(|| {
            format!(
                "the program failed: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        })?;
    Ok(Timed {
        wall,
        commands,
        faults: 0,
    })
}

/// One pymemcache client's `get` round trip against `server`, in µs.
fn round_trip_us(server: &str) -> Result<f64, String> {
    let script = "import sys,time\nfrom pymemcache.client.base import Client\n\
                  h,p=sys.argv[1].rsplit(':',1)\nc=Client((h,int(p)))\nc.set('k','v',noreply=False)\n\
                  n=int(sys.argv[2])\nt=time.perf_counter()\nfor _ in range(n): c.get('k')\n\
                  print((time.perf_counter()-t)/n*1e6)\n";
    let out = Command::new(PYTHON)
        .args(["-c", script, server, &ROUND_TRIPS.to_string()])
        .output()
        .map_err(|e| format!("cannot run {PYTHON}: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .map_err(|_| format!("no round trip: {}", String::from_utf8_lossy(&out.stderr)))
}

/// Writes section 12 into `md`.
pub(crate) fn section_program(md: &mut String) -> Result<(), String> {
    let ready = Command::new(PYTHON)
        .args(["-c", "import pymemcache, pytest"])
        .status()
        .is_ok_and(|s| s.success());
    if !ready {
        return Err(format!("{PYTHON} has no pymemcache or pytest"));
    }
    let daemon = MemcachedDaemon::start(&["-m", "64"])
        .map_err(|e| format!("cannot start memcached: {e}"))?
        .ok_or("no memcached binary")?;
    let real = daemon.addr().to_string();
    let trip = round_trip_us(&real)?;
    let free = uncontrolled(&real)?;
    drop(daemon);
    let program = root().join("benches/compare/programs/increments.py");
    let program = program.to_string_lossy();
    // Rounds of each, taken in turn, and the median of each: one round's wall time moves
    // by a tenth with the machine's load, as much as the reconnects cost.
    let (mut helds, mut lossies) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        helds.push(under_mcsim(&[], &[PYTHON, &program])?);
        lossies.push(under_mcsim(&["--lose-reply", "0.02"], &[PYTHON, &program])?);
    }
    let (held, lossy) = (median(helds), median(lossies));
    let lock = under_mcsim(
        &[],
        &[
            PYTHON,
            "-m",
            "pytest",
            "-q",
            "examples/python-lock/test_lock_mcsim.py::test_add_lock",
        ],
    )?;
    // A reconnect: the lossy run's time beyond what its commands cost without faults,
    // over the replies lost.
    let reconnect_us = (lossy.wall.as_secs_f64() * 1e6
        - held.per_command_us() * lossy.commands as f64)
        / lossy.faults.max(1) as f64;
    let runs_per_s = |t: &Timed| EXECUTIONS as f64 / t.wall.as_secs_f64();
    writeln!(
        md,
        "\n## 12. `mcsim test` on a real program\n\n\
         Python 3 with pymemcache, {EXECUTIONS} executions in one process each \
         (`benches/compare/programs/increments.py`: 3 threads, 10 increments each, an \
         increment made again after an error), measured in this run:\n\n\
         | run | wall | commands | per command | executions/s |\n|---|---|---|---|---|\n\
         | one client's `get` round trip, memcached 1.6.18, uncontrolled | | {ROUND_TRIPS} | {trip:.0} µs | |\n\
         | the program uncontrolled on memcached 1.6.18 (3 threads at once) | {} | {} | {:.0} µs | {:.0} |\n\
         | under `mcsim test` (each command released in turn; the median of {ROUNDS} rounds) | {} | {} | {:.0} µs | {:.0} |\n\
         | under `mcsim test --lose-reply 0.02` ({} replies lost, each a reconnect; the median of {ROUNDS} rounds, taken in turn with the above) | {} | {} | {:.0} µs | {:.0} |\n\
         | the pytest add lock (`examples/python-lock/test_lock_mcsim.py::test_add_lock`) under `mcsim test` | {} | {} | {:.0} µs | {:.0} |\n\n\
         Releasing commands one at a time costs {:.1}× the program's own uncontrolled \
         command time ({:.1}× one client's round trip, which no three-thread program \
         beats: the threads share one interpreter). A lost reply's reconnect (the client's \
         error, a new connection taking the participant's place, the command made again) \
         costs {}.",
        ms(free.wall),
        free.commands,
        free.per_command_us(),
        runs_per_s(&free),
        ms(held.wall),
        held.commands,
        held.per_command_us(),
        runs_per_s(&held),
        lossy.faults,
        ms(lossy.wall),
        lossy.commands,
        lossy.per_command_us(),
        runs_per_s(&lossy),
        ms(lock.wall),
        lock.commands,
        lock.per_command_us(),
        runs_per_s(&lock),
        held.per_command_us() / free.per_command_us(),
        held.per_command_us() / trip,
        if reconnect_us.abs() < held.per_command_us() {
            format!(
                "less than one command's time: {reconnect_us:+.0} µs each beyond the commands \
                 made, within what this run can tell apart"
            )
        } else {
            format!("about {reconnect_us:.0} µs beyond the commands it makes")
        },
    )
    .unwrap();
    Ok(())
}
