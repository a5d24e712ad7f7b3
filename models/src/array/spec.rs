//! The sequential array the read-mostly recipes are checked against.

use mcsim::lin::SequentialSpec;

use crate::array::recipe::apply;

/// A sequential array of strings: `Change` filters then appends, `Fetch` returns the whole
/// array.
#[derive(Debug, Clone, Copy, Default)]
pub struct ArraySpec;

/// Operations of [`ArraySpec`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArrayOp {
    /// Remove `delete`, then append `add`.
    Change {
        /// Elements appended.
        add: Vec<String>,
        /// Elements removed.
        delete: Vec<String>,
    },
    /// Read the whole array.
    Fetch,
}

impl SequentialSpec for ArraySpec {
    type State = Vec<String>;
    type Op = ArrayOp;
    type Ret = Option<Vec<String>>;

    fn init(&self) -> Vec<String> {
        Vec::new()
    }

    fn step(&self, state: &Vec<String>, op: &ArrayOp) -> (Vec<String>, Option<Vec<String>>) {
        match op {
            ArrayOp::Change { add, delete } => (apply(state.clone(), add, delete), None),
            ArrayOp::Fetch => (state.clone(), Some(state.clone())),
        }
    }

    fn read_only(&self, op: &ArrayOp) -> bool {
        matches!(op, ArrayOp::Fetch)
    }
}
