//! Transcript tests (the server's `state/tests/`, the agent's `session/tests/`): a
//! scenario's whole transcript is compared with an expected text written in the test's
//! source, indented as the code around it ([`check`], [`dedent`]). The update switch
//! (rust-analyzer's `UPDATE_EXPECT`): with `UPDATE_EXPECT=1` in the environment, a
//! scenario whose transcript differs rewrites its expected text in the source file
//! instead of failing. Review the diff, as you would a hand edit.
//!
//! The expected text is the last string literal among the arguments of the call that
//! `#[track_caller]` names (`run(...)` or `run_with(...)`); it is written back as a
//! plain literal, one transcript line a line, at the old text's indentation (a line's own
//! indentation kept on top), the closing quote indented as before. Several tests of one
//! file may fail at once (tests run in parallel): each file's text as it was first read
//! and every change to it are kept, so each write holds them all.

use std::collections::BTreeMap;
use std::ops::Range;
use std::panic::Location;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Whether `UPDATE_EXPECT` asks for expected texts to be rewritten.
pub fn enabled() -> bool {
    std::env::var_os("UPDATE_EXPECT").is_some_and(|v| v == "1")
}

/// Compares scenario `name`'s transcript `got` with `expected` (both through [`dedent`]);
/// with the switch on, a difference rewrites the expected text of the call at `at`
/// instead of failing.
pub fn check(at: &Location<'_>, name: &str, expected: &str, got: &str) {
    let want = dedent(expected);
    let got = dedent(got);
    if got != want && enabled() {
        rewrite(at, expected, &got);
        return;
    }
    assert!(
        got == want,
        "scenario `{name}`: the transcript differs (UPDATE_EXPECT=1 rewrites the expected \
         text)\n--- got ---\n{got}--- expected ---\n{want}"
    );
}

/// Each rewritten file's text as first read, and its changes (byte range → new text).
type Edits = BTreeMap<PathBuf, (String, Vec<(Range<usize>, String)>)>;

static FILES: Mutex<Edits> = Mutex::new(BTreeMap::new());

/// Rewrites the expected text of the call at `at`, whose literal holds `old`, to `got`
/// (the transcript).
pub fn rewrite(at: &Location<'_>, old: &str, got: &str) {
    let path = source_path(at.file());
    let mut files = FILES.lock().unwrap_or_else(|e| e.into_inner());
    let (text, edits) = files.entry(path.clone()).or_insert_with(|| {
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("UPDATE_EXPECT: reading {}: {e}", path.display()));
        (text, Vec::new())
    });
    let span = literal_at(text, at.line(), at.column())
        .unwrap_or_else(|| panic!("UPDATE_EXPECT: no string literal argument in the call at {at}"));
    let literal = &text[span.clone()];
    assert!(
        unescape(literal).as_deref() == Some(old),
        "UPDATE_EXPECT: the last argument of the call at {at} is not the expected text \
         as a plain literal; update it by hand"
    );
    let new = render(literal, got);
    edits.retain(|(r, _)| *r != span);
    edits.push((span, new));
    edits.sort_by_key(|(r, _)| r.start);
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for (r, new) in edits.iter() {
        out.push_str(&text[from..r.start]);
        out.push_str(new);
        from = r.end;
    }
    out.push_str(&text[from..]);
    std::fs::write(&path, out)
        .unwrap_or_else(|e| panic!("UPDATE_EXPECT: writing {}: {e}", path.display()));
    eprintln!("UPDATE_EXPECT: rewrote the expected text of the call at {at}");
}

/// `file!()`'s path (relative to the workspace root) from the test's directory (cargo
/// runs a test in its package's directory), else from this crate's: a build cache shared
/// by several checkouts may hold this crate compiled in another one.
fn source_path(file: &str) -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let here = std::env::current_dir().unwrap_or_default();
    here.ancestors()
        .chain(manifest.ancestors())
        .map(|dir| dir.join(file))
        .find(|p| p.exists())
        .unwrap_or_else(|| {
            panic!(
                "UPDATE_EXPECT: {file} not found above {}",
                manifest.display()
            )
        })
}

/// The byte range (quotes included) of the last string literal among the top-level
/// arguments of the call that starts at `line`:`column` (1-based, as `Location` says).
fn literal_at(text: &str, line: u32, column: u32) -> Option<Range<usize>> {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line as usize - 1)
        .map(str::len)
        .sum();
    let b = text.as_bytes();
    let mut i = line_start + column as usize - 1;
    let (mut depth, mut last) = (0usize, None);
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i += text[i..].find('\n').unwrap_or(text.len() - i);
                continue;
            }
            b'"' | b'r' if raw_or_plain(b, i).is_some() => {
                let end = raw_or_plain(b, i)?;
                if depth == 1 {
                    last = Some(i..end);
                }
                i = end;
                continue;
            }
            // A char literal such as '"' or '(' (a lifetime has no closing quote).
            b'\'' if b.get(i + 2) == Some(&b'\'') => i += 2,
            b'\'' if b.get(i + 1) == Some(&b'\\') => {
                i += text[i + 2..].find('\'')? + 2;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return last;
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Where the string literal starting at `i` ends (one past its closing quote), if one
/// starts there: `"..."` with escapes, or `r"..."`, `r#"..."#`.
fn raw_or_plain(b: &[u8], i: usize) -> Option<usize> {
    if b[i] == b'"' {
        let mut j = i + 1;
        while j < b.len() {
            match b[j] {
                b'\\' => j += 2,
                b'"' => return Some(j + 1),
                _ => j += 1,
            }
        }
        return None;
    }
    // `r` starts a raw string only where no identifier goes on before it.
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
        return None;
    }
    let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
    if b.get(i + 1 + hashes) != Some(&b'"') {
        return None;
    }
    let close: Vec<u8> = std::iter::once(b'"')
        .chain(std::iter::repeat(b'#').take(hashes))
        .collect();
    let body = i + 2 + hashes;
    b[body..]
        .windows(close.len())
        .position(|w| w == close.as_slice())
        .map(|p| body + p + close.len())
}

/// A literal's value: a raw string's body, or a plain one's with its escapes read
/// (`\n`, `\t`, `\\`, `\"`, `\'`, `\0` and line continuations; `None` for others).
fn unescape(literal: &str) -> Option<String> {
    if let Some(raw) = literal.strip_prefix('r') {
        let body = raw.trim_matches('#');
        return Some(body[1..body.len() - 1].to_string());
    }
    let body = &literal[1..literal.len() - 1];
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            '0' => out.push('\0'),
            c @ ('\\' | '"' | '\'') => out.push(c),
            '\n' => while chars.next_if(|c| c.is_whitespace()).is_some() {},
            _ => return None,
        }
    }
    Some(out)
}

/// `text` without the indentation its lines share, blank lines and trailing spaces
/// dropped, each line ending in a newline: how an expected text compares.
pub fn dedent(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let indent = lines
        .iter()
        .map(|l| l.len() - l.trim_start_matches(' ').len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| format!("{}\n", l[indent..].trim_end()))
        .collect()
}

/// `got` as a plain literal in the layout of `old`: a newline after the opening quote,
/// each line at the old text's indentation (12 spaces for an empty one) plus its own,
/// and the closing quote indented as before.
fn render(old: &str, got: &str) -> String {
    let value = unescape(old).unwrap_or_default();
    let indent = value
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches(' ').len())
        .min()
        .map_or_else(|| " ".repeat(12), |n| " ".repeat(n));
    let closing: String = match value.rsplit_once('\n') {
        Some((_, tail)) if tail.trim().is_empty() => tail.to_string(),
        _ => indent.get(4..).unwrap_or("").to_string(),
    };
    // A raw literal stays raw (with as many `#`s) while nothing in `got` would close it.
    let hashes = old
        .strip_prefix('r')
        .map(|r| r.len() - r.trim_start_matches('#').len());
    let close = format!("\"{}", "#".repeat(hashes.unwrap_or(0)));
    let raw = hashes.filter(|_| !got.contains(&close));
    let mut out = match raw {
        Some(n) => format!("r{}\"\n", "#".repeat(n)),
        None => String::from("\"\n"),
    };
    for line in got.lines() {
        if !line.is_empty() {
            out.push_str(&indent);
            match raw {
                Some(_) => out.push_str(line),
                None => out.push_str(&line.replace('\\', "\\\\").replace('"', "\\\"")),
            }
        }
        out.push('\n');
    }
    out.push_str(&closing);
    out.push_str(if raw.is_some() { &close } else { "\"" });
    out
}

#[test]
fn the_expected_literal_is_found_and_rendered_in_its_layout() {
    let src = "fn t() {\n    run(\n        \"name (x)\",\n        vec![Want(\"a\", vec![Run(1, \"true\")])], // a \"comment\n        \"\n            one \\\"q\\\"\n              job 1#1: started\n        \",\n    );\n}\n";
    let span = literal_at(src, 2, 5).expect("found");
    let literal = &src[span];
    assert_eq!(
        unescape(literal).as_deref(),
        Some("\n            one \"q\"\n              job 1#1: started\n        ")
    );
    assert_eq!(
        dedent(unescape(literal).as_deref().unwrap()),
        "one \"q\"\n  job 1#1: started\n"
    );
    assert_eq!(
        render(literal, "two \"r\"\n  job 2#1: started\n"),
        "\"\n            two \\\"r\\\"\n              job 2#1: started\n        \""
    );
    assert_eq!(unescape("r#\"a\"b\"#").as_deref(), Some("a\"b"));
    assert_eq!(
        render("r#\"\n    a\n\"#", "b \"c\"\n"),
        "r#\"\n    b \"c\"\n\"#",
        "a raw literal stays raw"
    );
}
