//! Bad arguments, said in one line: what is missing or wrong, named with what it is for,
//! clap's "did you mean" kept, and the help of the subcommand that was asked for.

use std::ffi::OsString;

use clap::CommandFactory;
use clap::error::{ContextKind, ContextValue, ErrorKind};

use crate::cli::args::Cli;
use mcsim::report::program;

/// The one line `mcsim` prints for the arguments `args` that clap refused with `e`.
pub(crate) fn one_line(e: &clap::Error, args: &[OsString]) -> String {
    let root = Cli::command();
    let sub = subcommand(&root, args);
    let shown = match sub {
        Some(s) => format!("{} {}", program(), s.get_name()),
        None => program().to_string(),
    };
    let hint = format!("see {shown} --help");
    if e.kind() == ErrorKind::MissingRequiredArgument
        && let Some(ContextValue::Strings(missing)) = e.get(ContextKind::InvalidArg)
    {
        let needs: Vec<String> = missing
            .iter()
            .map(|m| described(sub.unwrap_or(&root), m))
            .collect();
        return format!("error: {shown} needs {}; {hint}", needs.join(" and "));
    }
    if matches!(
        e.kind(),
        ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) && sub.is_none()
    {
        let names: Vec<&str> = root
            .get_subcommands()
            .map(|c| c.get_name())
            .filter(|n| *n != "help")
            .collect();
        return format!(
            "error: {shown} needs a command ({}); {hint}",
            names.join(", ")
        );
    }
    let text = e.render().to_string();
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("error: bad arguments").to_string();
    // What clap adds that helps: the values an argument takes, a similar argument or
    // subcommand ("tip: a similar argument exists: '--clients'").
    let extra: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("[possible values:") || l.starts_with("tip: a similar"))
        .collect();
    let mut line = first;
    for l in extra {
        line.push_str("; ");
        line.push_str(l);
    }
    format!("{line}; {hint}")
}

/// The subcommand `args` names, if any (the first word that is one).
fn subcommand<'a>(root: &'a clap::Command, args: &[OsString]) -> Option<&'a clap::Command> {
    args.iter()
        .skip(1)
        .filter_map(|a| a.to_str())
        .take_while(|a| *a != "--")
        .find_map(|a| root.find_subcommand(a))
}

/// A missing argument as clap shows it (`--clients <CLIENTS>`, `<SCENARIO>`, `-- <CMD>...`),
/// with the first sentence of its help: what it is for.
fn described(command: &clap::Command, shown: &str) -> String {
    let arg = command.get_arguments().find(|a| {
        let long = a.get_long().map(|l| format!("--{l}"));
        let value = a
            .get_value_names()
            .and_then(|v| v.first())
            .map(|v| format!("<{v}>"));
        let first = shown.trim_start_matches("-- ").split(' ').next();
        let first = first.map(|f| f.trim_end_matches("..."));
        long.as_deref() == first || (a.get_long().is_none() && value.as_deref() == first)
    });
    // The program after `--` is shown as it is typed.
    let shown = match arg {
        Some(a) if a.is_last_set() => format!(
            "-- {}…",
            shown.trim_start_matches("-- ").trim_end_matches("...")
        ),
        _ => shown.to_string(),
    };
    let shown = shown.as_str();
    let Some(help) = arg.and_then(|a| a.get_help()).map(|h| h.to_string()) else {
        return shown.to_string();
    };
    let sentence = help
        .split(". ")
        .next()
        .unwrap_or(&help)
        .trim_end_matches('.');
    let mut chars = sentence.chars();
    let sentence = match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    };
    format!("{shown} ({sentence})")
}
