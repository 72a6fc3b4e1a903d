//! Golden files: output compared with a committed file, a difference shown
//! as a unified line diff (`-expected`, `+actual`, a few lines of context),
//! the file rewritten on request.

use std::path::Path;

/// Either of these set rewrites the golden files instead of comparing with
/// them: `UPDATE_GOLDEN=1 cargo test --test cli`. (`TRIAGE_BLESS` is the name
/// tests/expected used.)
const UPDATE: [&str; 2] = ["UPDATE_GOLDEN", "TRIAGE_BLESS"];

/// Unchanged lines shown around each change.
const CONTEXT: usize = 3;

/// At most this many lines of a diff are shown; the rest are counted.
const MAX_SHOWN: usize = 80;

/// A line of context is cut after this many characters (a changed line is
/// shown whole).
const CONTEXT_WIDTH: usize = 160;

/// Above this many cells (lines × lines of the part that differs) the diff
/// is not minimal: all the old lines, then all the new ones.
const MAX_CELLS: usize = 16 << 20;

/// `actual` must be the contents of `path` (relative to the repository's
/// root, or absolute). With `UPDATE_GOLDEN` set, `path` is written instead.
/// On a difference, the panic shows a unified diff, not the whole output.
#[track_caller]
pub fn assert_golden(path: impl AsRef<Path>, actual: impl AsRef<[u8]>) {
    let shown = path.as_ref();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(shown);
    let actual = actual.as_ref();
    if UPDATE.iter().any(|v| std::env::var_os(v).is_some()) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 creates it)", shown.display()));
    if expected != actual {
        panic!(
            "the output differs from {} (-expected +actual); if the change is \
             deliberate, rerun with UPDATE_GOLDEN=1\n{}",
            shown.display(),
            line_diff(
                &String::from_utf8_lossy(&expected),
                &String::from_utf8_lossy(actual)
            )
        );
    }
}

/// One line of an edit script: in both, only in the expected, only in the
/// actual text.
#[derive(Clone, Copy, PartialEq)]
enum Op {
    Same,
    Del,
    Ins,
}

/// A unified diff of two texts by lines: `@@ -line,count +line,count @@`
/// hunks of ` `, `-` (expected) and `+` (actual) lines, with [`CONTEXT`]
/// lines around each change, cut after [`MAX_SHOWN`] lines. Empty when the
/// texts are equal.
pub fn line_diff(expected: &str, actual: &str) -> String {
    if expected == actual {
        return String::new();
    }
    let old: Vec<&str> = expected.lines().collect();
    let new: Vec<&str> = actual.lines().collect();
    if old == new {
        return "(the lines are equal: the texts differ in line endings or the newline at the end)\n"
            .to_string();
    }
    let ops = edit_script(&old, &new);

    // Each op's line number in the old and the new text, 0-based.
    let mut at = Vec::with_capacity(ops.len());
    let (mut i, mut j) = (0, 0);
    for &op in &ops {
        at.push((i, j));
        match op {
            Op::Same => (i, j) = (i + 1, j + 1),
            Op::Del => i += 1,
            Op::Ins => j += 1,
        }
    }

    // Hunks: runs of ops around the changes, joined when their context meets.
    let mut hunks: Vec<(usize, usize)> = Vec::new();
    for (k, &op) in ops.iter().enumerate() {
        if op == Op::Same {
            continue;
        }
        let start = k.saturating_sub(CONTEXT);
        let end = (k + 1 + CONTEXT).min(ops.len());
        match hunks.last_mut() {
            Some(last) if start <= last.1 => last.1 = end,
            _ => hunks.push((start, end)),
        }
    }

    let mut out = String::new();
    let mut shown = 0;
    let changed = ops.iter().filter(|&&op| op != Op::Same).count();
    let mut changed_shown = 0;
    'hunks: for &(start, end) in &hunks {
        let part = &ops[start..end];
        let dels = part.iter().filter(|&&op| op != Op::Ins).count();
        let ins = part.iter().filter(|&&op| op != Op::Del).count();
        let (i, j) = at[start];
        // As diff -u: a range of no lines starts at the line before it.
        let first = |line: usize, count: usize| if count == 0 { line } else { line + 1 };
        out.push_str(&format!(
            "@@ -{},{dels} +{},{ins} @@\n",
            first(i, dels),
            first(j, ins)
        ));
        for (k, &op) in part.iter().enumerate() {
            if shown == MAX_SHOWN {
                break 'hunks;
            }
            let (i, j) = at[start + k];
            match op {
                Op::Same => out.push_str(&format!(" {}\n", cut(old[i]))),
                Op::Del => out.push_str(&format!("-{}\n", old[i])),
                Op::Ins => out.push_str(&format!("+{}\n", new[j])),
            }
            if op != Op::Same {
                changed_shown += 1;
            }
            shown += 1;
        }
    }
    if changed_shown < changed {
        out.push_str(&format!(
            "... and {} more changed lines\n",
            changed - changed_shown
        ));
    }
    out
}

/// `line` cut after [`CONTEXT_WIDTH`] characters.
fn cut(line: &str) -> String {
    match line.char_indices().nth(CONTEXT_WIDTH) {
        Some((end, _)) => format!("{}...", &line[..end]),
        None => line.to_string(),
    }
}

/// The edit script from `old` to `new`: the common lines at both ends, and a
/// longest common subsequence of the lines between.
fn edit_script(old: &[&str], new: &[&str]) -> Vec<Op> {
    let head = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let tail = old[head..]
        .iter()
        .rev()
        .zip(new[head..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (a, b) = (&old[head..old.len() - tail], &new[head..new.len() - tail]);
    let mut ops = vec![Op::Same; head];
    if a.len().saturating_mul(b.len()) > MAX_CELLS {
        ops.extend(std::iter::repeat_n(Op::Del, a.len()));
        ops.extend(std::iter::repeat_n(Op::Ins, b.len()));
    } else {
        // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
        let w = b.len() + 1;
        let mut lcs = vec![0u32; (a.len() + 1) * w];
        for i in (0..a.len()).rev() {
            for j in (0..b.len()).rev() {
                lcs[i * w + j] = if a[i] == b[j] {
                    lcs[(i + 1) * w + j + 1] + 1
                } else {
                    lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            if i < a.len() && j < b.len() && a[i] == b[j] {
                ops.push(Op::Same);
                (i, j) = (i + 1, j + 1);
            } else if j == b.len() || (i < a.len() && lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
                ops.push(Op::Del);
                i += 1;
            } else {
                ops.push(Op::Ins);
                j += 1;
            }
        }
    }
    ops.extend(std::iter::repeat_n(Op::Same, tail));
    ops
}
