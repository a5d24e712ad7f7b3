//! The program under test and its runs: started afresh for each execution, or, when it
//! asks for its executions itself (`mcsim next` on a connection, as a test framework's
//! helper does), started once and given one execution after another, the servers reset
//! between them.

use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use mcsim::explore::Schedule;
use mcsim_serve::{NextRequest, Running};

use super::chooser::{Record, SharedStrategy, StrategyChooser};
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
    /// The process running now, and the thread collecting its standard error.
    child: Option<(Child, JoinHandle<String>)>,
    /// Its request for the next execution, held until that execution begins.
    waiting: Option<NextRequest>,
    /// It asked for an execution at least once: it runs many in one process.
    pub(super) persistent: bool,
}

/// How an execution ended.
enum End {
    /// The program asked for the next one (kept in [`Program::waiting`]).
    Next,
    /// The program exited, with what it wrote on its standard error.
    Exited(ExitStatus, String),
    /// It was still running at the timeout and was killed.
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
        strategy.lock().expect("never poisoned").begin(execution);
        let record = Arc::new(Mutex::new(Record::default()));
        let chooser = StrategyChooser {
            strategy: strategy.clone(),
            record: record.clone(),
        };
        let reset = |running: &Running| {
            let chooser = Box::new(chooser.clone());
            running.reset(seed, Some((options.clients, chooser)));
        };
        let given = format!("run {execution} seed {seed} clients {}", options.clients);
        // Given to the program when it asks (`mcsim next`), or, started afresh, in its
        // environment.
        let mut asked = match self.waiting.take() {
            Some(request) => {
                reset(&self.running);
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
            let (child, _) = self.child.as_mut().context("the program is not running")?;
            if let Some(status) = child.try_wait()? {
                let (_, stderr) = self.child.take().expect("running");
                break End::Exited(status, stderr.join().unwrap_or_default());
            }
            if started.elapsed() > options.timeout {
                break End::Stuck(self.kill());
            }
        };
        // The program's connections close as its execution ends; their last lines follow.
        self.running.wait_closed(Instant::now() + CLOSING);
        if let Some(first) = self.running.misuse().first() {
            bail!("run {execution} of the program asked mcsim what it cannot do: {first}");
        }
        let (stuck, exit) = match end {
            End::Next => (false, None),
            End::Exited(s, _) if s.success() => (false, None),
            End::Exited(s, stderr) => (false, Some(format!("{s}{}", last_lines(&stderr)))),
            End::Stuck(stderr) => (
                true,
                Some(format!(
                    "stuck: still running after {:?} (killed){}",
                    options.timeout,
                    last_lines(&stderr)
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
                exit.map_or(String::new(), |e| format!("; the program: {e}"))
            )),
        };
        let record = std::mem::take(&mut *record.lock().expect("never poisoned"));
        let (metrics, sometimes) = self.running.declared();
        Ok(Outcome {
            metrics,
            sometimes,
            failure,
            kind: (stuck, exited_badly, !declared.is_empty()),
            trace: self.running.trace(),
            released: record.choices.len(),
            preemptions: record.preemptions,
            names: record.names,
            clients: options.clients,
            schedule: Schedule {
                phase: None,
                choices: record.choices,
            },
            diverged: record.diverged,
        })
    }

    /// Starts the program for `execution`, given in its environment.
    fn spawn(&mut self, options: &TestOptions, (execution, seed): (u64, u64)) -> Result<()> {
        let servers: Vec<String> = self.running.addrs().iter().map(|a| a.to_string()).collect();
        let (program, args) = options.command.split_first().context("no command given")?;
        let mut child = Command::new(program)
            .args(args)
            .env("MCSIM_SERVERS", servers.join(","))
            .env("MCSIM_SEED", seed.to_string())
            .env("MCSIM_EXECUTION", execution.to_string())
            .env("MCSIM_CLIENTS", options.clients.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot run {program:?}"))?;
        let mut pipe = child.stderr.take().context("no pipe for standard error")?;
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut pipe, &mut text);
            text
        });
        self.child = Some((child, stderr));
        Ok(())
    }

    /// Kills the program if it runs; what it wrote on its standard error.
    fn kill(&mut self) -> String {
        let Some((mut child, stderr)) = self.child.take() else {
            return String::new();
        };
        let _ = child.kill();
        let _ = child.wait();
        stderr.join().unwrap_or_default()
    }

    /// The executions are over: a program waiting for the next is told `done` and the
    /// verdict (`pass` or `fail`), and given the timeout to exit before it is killed.
    /// Its exit status, if it exited badly after being told `done pass`: what it did
    /// after its executions, which no execution is judged by.
    pub(super) fn finish(&mut self, verdict: &str, timeout: Duration) -> Option<String> {
        let request = self.waiting.take()?;
        request.answer(&format!("done {verdict}"));
        let by = Instant::now() + timeout;
        while let Some((child, _)) = self.child.as_mut() {
            match child.try_wait() {
                Ok(Some(status)) => {
                    let (_, stderr) = self.child.take().expect("running");
                    let stderr = stderr.join().unwrap_or_default();
                    return (!status.success() && verdict == "pass")
                        .then(|| format!("{status}{}", last_lines(&stderr)));
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

/// The last lines of what the program wrote on its standard error, indented.
pub(super) fn last_lines(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().collect();
    let tail = &lines[lines.len().saturating_sub(8)..];
    tail.iter().map(|l| format!("\n    {l}")).collect()
}
