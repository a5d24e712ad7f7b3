//! Errors in scenario files: always with the file, the line and the field. A field's
//! own error ([`FieldError`]) comes from the model API, which reads parameters before
//! the file is known.

use std::fmt;
use std::path::PathBuf;

/// A problem with one field of a scenario file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file.
    pub file: PathBuf,
    /// 1-based line (0 if unknown).
    pub line: usize,
    /// 1-based column (0 if unknown).
    pub column: usize,
    /// The field, as a dotted path when known (e.g. `params.hold_ms`).
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl std::error::Error for ScenarioError {}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        if let Some(field) = &self.field {
            write!(f, ": field `{field}`")?;
        }
        write!(f, ": {}", self.message)
    }
}
