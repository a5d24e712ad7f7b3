//! The program under test and its runs: started afresh for each execution, or, when it
//! asks for its executions itself (`mcsim next` on a connection, as a test framework's
//! helper does), started once and given one execution after another, the servers reset
//! between them.

use std::process::ExitStatus;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use mcsim::explore::Schedule;
use mcsim_serve::{NextRequest, Running};

use super::chooser::{Record, SharedStrategy, StrategyChooser};
use super::process::Process;
use super::{Outcome, TestOptions};

/// How often a run looks whether the program exited while it waits for a request.
const POLL: Duration = Duration::from_millis(2);

/// How long the program's connections may take to close after its execution ended.
const CLOSING: Duration = Duration::from_secs(2);

/// The program and the servers it runs against.
pub(super) struct Program {
    pub(super) running: Running,
    /// Its requests for executions (`mcsim next`).
    requests: Receiver<NextRequest>,
    /// The process running now.
    child: Option<Process>,
    /// Its request for the next execution, held until that execution begins.
    waiting: Option<NextRequest>,
    /// It asked for an execution at least once: it runs many in one process.
    pub(super) persistent: bool,
}

/// How an execution ended.
enum End {
    /// The program asked for the next one (kept in [`Program::waiting`]).
    Next,
    /// The program exited, with the participants still taking part when it did and the
    /// last lines it wrote.
    Exited(ExitStatus, Vec<String>, String),
    /// It was still running at the timeout and was killed; the last lines it wrote.
    Stuck(String),
}

impl Program {
    pub(super) fn new(running: Running) -> Program {
        let requests = running.executions();
        Program {
            running,
            requests,
            child: None,
            waiting: None,
            persistent: false,
        }
    }

    /// One execution of the program, its commands released as `strategy` picks.
    pub(super) fn run(
        &mut self,
        options: &TestOptions,
        strategy: &SharedStrategy,
        (execution, seed): (u64, u64),
    ) -> Result<Outcome> {
        // The servers' tick phase: the strategy's for this execution where the scenario
        // leaves it free (a replay's, from its schedule).
        let free = options.scenario.as_ref().is_none_or(|s| s.phase_free);
        let phase = {
            let mut strategy = strategy.lock().expect("never poisoned");
            strategy.begin(execution);
            strategy.tick_phase(free)
        };
        let record = Arc::new(Mutex::new(Record::default()));
        let chooser = StrategyChooser {
            strategy: strategy.clone(),
            record: record.clone(),
        };
        let reset = |running: &Running| {
            let chooser = Box::new(chooser.clone());
            running.reset(seed, phase, Some((options.clients, chooser)));
        };
        let given = format!("run {execution} seed {seed} clients {}", options.clients);
        // Given to the program when it asks (`mcsim next`), or, started afresh, in its
        // environment.
        let mut asked = match self.waiting.take() {
            Some(request) => {
                reset(&self.running);
                if let Some(child) = self.child.as_mut() {
                    child.clear_output();
                }
                request.answer(&given);
                true
            }
            None => {
                reset(&self.running);
                self.spawn(options, (execution, seed))?;
                false
            }
        };
        let started = Instant::now();
        let end = loop {
            match self.requests.recv_timeout(POLL) {
                Ok(request) if !asked => {
                    // A program started afresh asks for its first execution: this one.
                    self.persistent = true;
                    reset(&self.running);
                    request.answer(&given);
                    asked = true;
                    continue;
                }
                Ok(request) => {
                    self.waiting = Some(request);
                    break End::Next;
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => unreachable!("the servers hold a sender"),
            }
            // A program that asks what mcsim cannot do is not judged: said at once.
            if let Some(first) = self.running.misuse().first() {
                self.kill();
                bail!("run {execution} of the program asked mcsim what it cannot do: {first}");
            }
            let child = self.child.as_mut().context("the program is not running")?;
            if let Some(status) = child.try_wait()? {
                // Who was still taking part when it exited, before what it started ends.
                let running = self.running.running_participants();
                let mut child = self.child.take().expect("running");
                child.kill();
                break End::Exited(status, running, child.last_lines());
            }
            if started.elapsed() > options.timeout {
                break End::Stuck(self.kill());
            }
        };
        let ended = end.describe(started.elapsed());
        let output = match &end {
            End::Exited(_, _, output) | End::Stuck(output) => output.clone(),
            End::Next => String::new(),
        };
        // The program's connections close as its execution ends; their last lines follow.
        self.running.wait_closed(Instant::now() + CLOSING);
        if let Some(first) = self.running.misuse().first() {
            bail!("run {execution} of the program asked mcsim what it cannot do: {first}");
        }
        let (stuck, exit) = match end {
            End::Next => (false, None),
            End::Exited(s, _, _) if s.success() => (false, None),
            End::Exited(s, running, output) => (false, Some(exited_while(&s, &running, &output))),
            End::Stuck(output) => (
                true,
                Some(format!(
                    "stuck: still running after {:?} (killed){output}",
                    options.timeout,
                )),
            ),
        };
        let exited_badly = exit.is_some() && !stuck;
        // What the program declared (`mcsim fail`, a section entered twice) fails it too.
        let declared = self.running.failures();
        let failure = match (exit, declared.is_empty()) {
            (exit, true) => exit,
            (exit, false) => Some(format!(
                "{}{}",
                declared.join("; "),
                exit.map_or(String::new(), |e| format!("; {e}"))
            )),
        };
        let record = std::mem::take(&mut *record.lock().expect("never poisoned"));
        let (metrics, sometimes) = self.running.declared();
        Ok(Outcome {
            participants: self.running.participants(),
            unscheduled: self.running.unscheduled(),
            failed_at: self.running.failed_at(),
            vanished: self.running.vanished_at(),
            output,
            ended,
            metrics,
            sometimes,
            failure,
            kind: (stuck, exited_badly, !declared.is_empty()),
            trace: self.running.trace(),
            released: record.choices.len(),
            faults: self.running.faults(),
            fault_counts: self.running.fault_counts(),
            drawn: self.running.exchanges(),
            preemptions: record.preemptions,
            clients: options.clients,
            schedule: Schedule {
                phase: phase.map(|p| p.as_micros() as u32),
                choices: record.choices,
            },
            diverged: record.diverged,
            cut_short: record.cut_short,
            phase_points: self.running.phase_points(),
        })
    }

    /// Starts the program for `execution`, given in its environment.
    fn spawn(&mut self, options: &TestOptions, (execution, seed): (u64, u64)) -> Result<()> {
        let servers: Vec<String> = self.running.addrs().iter().map(|a| a.to_string()).collect();
        let env = [
            ("MCSIM_SERVERS", servers.join(",")),
            ("MCSIM_SEED", seed.to_string()),
            ("MCSIM_EXECUTION", execution.to_string()),
            ("MCSIM_CLIENTS", options.clients.to_string()),
        ];
        self.child = Some(Process::spawn(&options.command, &env)?);
        Ok(())
    }

    /// Kills the program if it runs, with whatever it started; the last lines it wrote.
    fn kill(&mut self) -> String {
        let Some(mut child) = self.child.take() else {
            return String::new();
        };
        child.kill();
        child.last_lines()
    }

    /// The executions are over: a program waiting for the next is told `done` and the
    /// verdict (`pass` or `fail`), and given the timeout to exit before it is killed.
    /// Its exit status, if it exited badly after being told `done pass`: what it did
    /// after its executions, which no execution is judged by.
    pub(super) fn finish(&mut self, verdict: &str, timeout: Duration) -> Option<String> {
        let request = self.waiting.take()?;
        request.answer(&format!("done {verdict}"));
        let by = Instant::now() + timeout;
        while let Some(child) = self.child.as_mut() {
            match child.try_wait() {
                Ok(Some(status)) => {
                    let mut child = self.child.take().expect("running");
                    return (!status.success() && verdict == "pass")
                        .then(|| format!("{status}{}", child.last_lines()));
                }
                Ok(None) if Instant::now() < by => std::thread::sleep(POLL),
                _ => {
                    self.kill();
                    return Some(format!(
                        "still running {timeout:?} after it was told done (killed)"
                    ));
                }
            }
        }
        None
    }
}

impl Drop for Program {
    /// Nothing of the program outlives `mcsim test`, whatever ended it.
    fn drop(&mut self) {
        if let Some(request) = self.waiting.take() {
            request.answer("done");
        }
        self.kill();
    }
}

impl End {
    /// How the execution ended, `elapsed` after it began: "the program exited 0 after
    /// 0.02 s".
    fn describe(&self, elapsed: Duration) -> String {
        let after = format!("after {:.2} s", elapsed.as_secs_f64());
        match self {
            End::Next => format!("the program asked for its next execution {after}"),
            End::Exited(status, _, _) => format!("the program {} {after}", exited(status)),
            End::Stuck(_) => format!("the program was still running {after} (killed)"),
        }
    }
}

/// How a program that exited non-zero did: "the program exited 3 while t1 and t2 were
/// still running", then its last lines.
fn exited_while(status: &ExitStatus, running: &[String], output: &str) -> String {
    let still = match running {
        [] => String::new(),
        [one] => format!(" while {one} was still running"),
        [rest @ .., last] => format!(" while {} and {last} were still running", rest.join(", ")),
    };
    format!("the program {}{still}{output}", exited(status))
}

/// "exited 3", or "was killed by signal 9".
pub(super) fn exited(status: &ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => format!("ended ({status})"),
    }
}
