//! `mcsim merge`: shard results combined into one summary, one set of reports and one
//! exit code.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::cli::gate::{Outputs, conclude, write_report};
use crate::html::Heading;
use mcsim::report::merge::{merge, merge_junit, read_rows};

pub(crate) fn run(inputs: &[PathBuf], outputs: &Outputs) -> Result<ExitCode> {
    let (xml, json): (Vec<&PathBuf>, Vec<&PathBuf>) = inputs
        .iter()
        .partition(|p| p.extension().is_some_and(|e| e == "xml"));
    let junit_inputs: Vec<(PathBuf, String)> = xml
        .iter()
        .map(|p| {
            std::fs::read_to_string(p)
                .map(|text| ((*p).clone(), text))
                .with_context(|| format!("reading {}", p.display()))
        })
        .collect::<Result<_>>()?;
    let merged_junit = if junit_inputs.is_empty() {
        None
    } else {
        Some(merge_junit(&junit_inputs)?)
    };
    if json.is_empty() {
        // JUnit alone: one suite, and its failures decide the exit code.
        let text = merged_junit.unwrap_or_default();
        let failures = text.matches("<failure").count();
        let tests = text.matches("<testcase").count();
        let target = outputs
            .junit
            .clone()
            .unwrap_or_else(|| "reports/junit.xml".into());
        write_report(&target, &text)?;
        outln!(
            "{tests} test cases from {} JUnit reports, {failures} failed; merged into {}",
            junit_inputs.len(),
            target.display()
        );
        return Ok(if failures == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    let shards = json
        .iter()
        .map(|p| Ok(((*p).clone(), read_rows(p)?)))
        .collect::<Result<Vec<_>>>()?;
    let rows = merge(&shards)?;
    let split = rows
        .iter()
        .find_map(|r| r.shard)
        .map(|(_, n)| format!("{n} shards"))
        .unwrap_or_else(|| format!("{} reports", shards.len()));
    let heading = Heading {
        title: "mcsim check (merged)".into(),
        facts: vec![format!("merged from {split}")],
    };
    // The JUnit inputs, when given, are the JUnit output; otherwise it comes from the rows.
    let row_outputs = Outputs {
        junit: if merged_junit.is_some() {
            None
        } else {
            outputs.junit.clone()
        },
        ..outputs.clone()
    };
    let code = conclude(
        &rows,
        &row_outputs,
        &heading,
        &format!(", merged from {split}"),
    )?;
    if let (Some(text), Some(target)) = (merged_junit, &outputs.junit) {
        write_report(target, &text)?;
        outln!(
            "JUnit merged from {} reports into {}",
            xml.len(),
            target.display()
        );
    }
    Ok(code)
}
