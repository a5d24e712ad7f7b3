//! Reading a scenario file: only a regular file of bounded size, and where in it an
//! error points.

use std::path::Path;

use super::ScenarioError;

/// The `[table]` whose header is on the line holding `offset`, if any.
pub(super) fn table_at(source: &str, offset: usize) -> Option<String> {
    let offset = offset.min(source.len());
    let line_start = source[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = source[line_start..].lines().next()?.trim();
    let name = line.strip_prefix('[')?.strip_suffix(']')?.trim();
    Some(name.to_string())
}

/// The largest scenario file read (a scenario is a few hundred bytes).
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// A scenario file's text: only a regular file (a FIFO or a device would block or never
/// end) of at most [`MAX_FILE_BYTES`].
pub(crate) fn read_source(path: &Path) -> Result<String, ScenarioError> {
    let fail = |message: String| ScenarioError {
        file: path.to_path_buf(),
        line: 0,
        column: 0,
        field: None,
        message,
    };
    let meta = std::fs::metadata(path).map_err(|e| fail(format!("cannot read: {e}")))?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file"
        };
        return Err(fail(format!(
            "cannot read: {what} (a scenario is a TOML file)"
        )));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(fail(format!(
            "cannot read: {} bytes, over the {MAX_FILE_BYTES} a scenario file may have",
            meta.len()
        )));
    }
    std::fs::read_to_string(path).map_err(|e| fail(format!("cannot read: {e}")))
}
