//! `/` search in the Log view: smart case (case-insensitive unless the query has a capital, as
//! less and vim's smartcase do), every occurrence highlighted, `n`/`N` step through the lines
//! that match, wrapping around.

use std::collections::VecDeque;

/// The search of one Log view.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Search {
    /// The search line while it is open (`/` typed, Enter not yet).
    pub input: Option<String>,
    /// The query in force (empty: none).
    pub query: String,
    /// The line of the current match (index into the buffer).
    pub current: Option<usize>,
}

impl Search {
    fn case_sensitive(&self) -> bool {
        self.query.chars().any(char::is_uppercase)
    }

    /// Byte ranges of every occurrence of the query in `line` (non-overlapping, in order).
    pub fn ranges(&self, line: &str) -> Vec<(usize, usize)> {
        if self.query.is_empty() {
            return Vec::new();
        }
        let (hay, needle) = if self.case_sensitive() {
            (line.to_owned(), self.query.clone())
        } else {
            (lower(line), lower(&self.query))
        };
        // Lowercasing can change byte lengths outside ASCII: only trust ranges that land on
        // the original's char boundaries with the same length.
        if hay.len() != line.len() {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut at = 0;
        while let Some(found) = hay[at..].find(&needle) {
            let start = at + found;
            let end = start + needle.len();
            if line.is_char_boundary(start) && line.is_char_boundary(end) {
                out.push((start, end));
            }
            at = end.max(start + 1);
            while at < hay.len() && !hay.is_char_boundary(at) {
                at += 1;
            }
            if at >= hay.len() {
                break;
            }
        }
        out
    }

    /// True when `line` contains the query.
    pub fn matches(&self, line: &str) -> bool {
        !self.ranges(line).is_empty()
    }

    /// The next matching line at or after `from` (forward), or the last one before `from`
    /// (backward).
    pub fn find(&self, lines: &VecDeque<String>, from: usize, forward: bool) -> Option<usize> {
        if self.query.is_empty() {
            return None;
        }
        if forward {
            (from..lines.len()).find(|&i| self.matches(&lines[i]))
        } else {
            (0..from.min(lines.len()))
                .rev()
                .find(|&i| self.matches(&lines[i]))
        }
    }

    /// (number of the current match among the matching lines, how many lines match).
    pub fn position(&self, lines: &VecDeque<String>) -> (Option<usize>, usize) {
        let mut total = 0;
        let mut at = None;
        for (i, line) in lines.iter().enumerate() {
            if self.matches(line) {
                total += 1;
                if Some(i) == self.current {
                    at = Some(total);
                }
            }
        }
        (at, total)
    }
}

fn lower(s: &str) -> String {
    s.chars().flat_map(char::to_lowercase).collect()
}
