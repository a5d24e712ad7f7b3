//! Splitting a command line into tokens, with memcached's limits.
//!
//! memcached splits on spaces only (a tab is part of a token), skips empty tokens, and
//! stops after 23 tokens: whatever follows is kept unsplit, and only multi-gets go on to
//! read it. Its token count always includes one empty terminal token, so a command's
//! argument-count rules are written in terms of `words + 1`.

/// memcached's `MAX_TOKENS`: at most this many tokens, counting the terminal one.
pub const MAX_TOKENS: usize = 24;

/// The words of one line: at most 23, kept in place (a server tokenizes every command
/// line it reads, and a vector of its own for each was a fifth of `serve`'s allocations).
pub type Words<'a> = smallvec::SmallVec<[&'a [u8]; MAX_TOKENS - 1]>;

/// One tokenized line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tokens<'a> {
    /// The tokens, in order.
    pub words: Words<'a>,
    /// The unsplit remainder after the 23rd token, when there is one.
    pub rest: Option<&'a [u8]>,
}

impl<'a> Tokens<'a> {
    /// memcached's `ntokens`: the words plus the terminal token.
    pub fn count(&self) -> usize {
        self.words.len() + 1
    }

    /// The word at `i`, or an empty slice past the end.
    pub fn word(&self, i: usize) -> &'a [u8] {
        self.words.get(i).copied().unwrap_or(&[])
    }

    /// The last word (where memcached looks for `noreply`).
    pub fn last(&self) -> &'a [u8] {
        self.words.last().copied().unwrap_or(&[])
    }
}

/// Splits `line` (without its line end) as memcached's `tokenize_command` does.
pub fn tokenize(line: &[u8]) -> Tokens<'_> {
    let mut words = Words::new();
    let mut start = 0;
    let mut i = 0;
    while i < line.len() {
        if line[i] == b' ' {
            if start != i {
                words.push(&line[start..i]);
                if words.len() == MAX_TOKENS - 1 {
                    let rest = (i + 1 < line.len()).then(|| &line[i + 1..]);
                    return Tokens { words, rest };
                }
            }
            start = i + 1;
        }
        i += 1;
    }
    if start != line.len() {
        words.push(&line[start..]);
    }
    Tokens { words, rest: None }
}

/// Every word of `line` after the first `skip`, continuing past the 23-token limit as
/// memcached's multi-get does.
pub fn all_words_after(tokens: &Tokens<'_>, skip: usize) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = tokens.words.iter().skip(skip).map(|w| w.to_vec()).collect();
    let mut rest = tokens.rest;
    while let Some(r) = rest {
        let more = tokenize(r);
        out.extend(more.words.iter().map(|w| w.to_vec()));
        rest = more.rest;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_spaces_only() {
        let t = tokenize(b"  get  a\tb   c ");
        assert_eq!(t.words.as_slice(), [&b"get"[..], b"a\tb", b"c"]);
        assert_eq!(t.count(), 4);
        assert!(t.rest.is_none());
        assert_eq!(tokenize(b"").count(), 1);
    }

    #[test]
    fn stops_after_23() {
        let line: Vec<u8> = (0..30)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ")
            .into_bytes();
        let t = tokenize(&line);
        assert_eq!(t.count(), MAX_TOKENS);
        assert_eq!(t.rest, Some(&b"w23 w24 w25 w26 w27 w28 w29"[..]));
        assert_eq!(all_words_after(&t, 1).len(), 29);
        let exactly: Vec<u8> = (0..23)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ")
            .into_bytes();
        let t = tokenize(&exactly);
        assert_eq!(t.count(), MAX_TOKENS);
        assert!(t.rest.is_none());
    }
}
