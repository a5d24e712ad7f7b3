//! The program's process: started in a process group of its own, so that whatever it
//! starts (forked workers, a test runner's children) ends with it; the last lines it
//! wrote, on its standard output and error alike, kept to show with a failure; and
//! nothing of it left running when `mcsim test` ends, however it ends (an interrupt
//! too).

use std::collections::{BTreeSet, VecDeque};
use std::io::BufRead;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, Once};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rustix::process::{Pid, Signal, kill_process_group};

/// Lines of the program's output kept (the last ones).
const TAIL: usize = 12;

/// How long the output's last lines may take to arrive after the program ended.
const DRAIN: Duration = Duration::from_millis(300);

/// The process groups of programs running now, killed if `mcsim` is interrupted.
static GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

/// A running program.
pub(super) struct Process {
    child: Child,
    /// The last lines it wrote, in the order they came.
    tail: Arc<Mutex<VecDeque<String>>>,
    readers: Vec<JoinHandle<()>>,
}

impl Process {
    /// Starts `command` (a program and its arguments) with `env` added to its environment.
    pub(super) fn spawn(command: &[String], env: &[(&str, String)]) -> Result<Process> {
        interrupts_kill_programs();
        let (program, args) = command.split_first().context("no command given")?;
        let mut child = Command::new(program)
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .with_context(|| format!("cannot run {program:?}"))?;
        GROUPS
            .lock()
            .expect("never poisoned")
            .insert(child.id() as i32);
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let mut readers = Vec::new();
        let stdout = child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>);
        let stderr = child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>);
        for pipe in [stdout, stderr].into_iter().flatten() {
            let tail = tail.clone();
            readers.push(std::thread::spawn(move || keep_tail(pipe, &tail)));
        }
        Ok(Process {
            child,
            tail,
            readers,
        })
    }

    /// Its exit status, if it exited (whatever it started may still run: [`kill`](Process::kill)
    /// ends it).
    pub(super) fn try_wait(&mut self) -> Result<Option<ExitStatus>> {
        Ok(self.child.try_wait()?)
    }

    /// Kills it and whatever it started, and waits for it.
    pub(super) fn kill(&mut self) {
        self.kill_group();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The last lines it wrote, indented, each on a line of its own (empty if none),
    /// once its output has ended or a moment has passed.
    pub(super) fn last_lines(&mut self) -> String {
        let by = Instant::now() + DRAIN;
        while self.readers.iter().any(|r| !r.is_finished()) && Instant::now() < by {
            std::thread::sleep(Duration::from_millis(2));
        }
        let tail = std::mem::take(&mut *self.tail.lock().expect("never poisoned"));
        tail.iter().map(|l| format!("\n    {l}")).collect()
    }

    /// Forgets the lines written so far (a new execution begins).
    pub(super) fn clear_output(&mut self) {
        self.tail.lock().expect("never poisoned").clear();
    }

    fn kill_group(&mut self) {
        let id = self.child.id() as i32;
        if GROUPS.lock().expect("never poisoned").remove(&id)
            && let Some(pid) = Pid::from_raw(id)
        {
            let _ = kill_process_group(pid, Signal::KILL);
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Reads `pipe` to its end, keeping its last [`TAIL`] lines in `tail`.
fn keep_tail(pipe: Box<dyn std::io::Read + Send>, tail: &Mutex<VecDeque<String>>) {
    let mut reader = std::io::BufReader::new(pipe);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line).trim_end().to_string();
        let mut tail = tail.lock().expect("never poisoned");
        if tail.len() == TAIL {
            tail.pop_front();
        }
        tail.push_back(text);
    }
}

/// On the first program started: an interrupt (Ctrl-C, `SIGTERM`, `SIGHUP`) of `mcsim`
/// kills every program running, with what it started, before `mcsim` exits (130).
fn interrupts_kill_programs() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            let groups = std::mem::take(&mut *GROUPS.lock().expect("never poisoned"));
            for id in groups {
                if let Some(pid) = Pid::from_raw(id) {
                    let _ = kill_process_group(pid, Signal::KILL);
                }
            }
            std::process::exit(130);
        });
    });
}
