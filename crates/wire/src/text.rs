//! Counted nouns for the messages both the server and the CLI print, so no message says
//! "1 free GPUs" or "lost 1 times"; what may reach a terminal of what users and agents
//! chose (job names, commands, node names), and a command as one line.

use std::borrow::Cow;

/// `n` and the noun, in the singular for exactly one: `count(1, "GPU")` is `1 GPU`,
/// `count(3, "GPU")` is `3 GPUs`. For nouns whose plural is not `noun` + `s`, use
/// [`count_as`].
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// [`count`] with an explicit plural: `count_as(2, "was", "were")` is `2 were`.
pub fn count_as(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The word alone: `one` for exactly one, else `many` (a verb that agrees with a count).
pub fn agree(n: impl Into<u64>, one: &'static str, many: &'static str) -> &'static str {
    if n.into() == 1 {
        one
    } else {
        many
    }
}

/// Whether a character must not reach a terminal as it is: the C0 controls (ESC starts
/// the sequences that retitle a terminal or move its cursor; a newline or a tab breaks a
/// table), DEL, the C1 controls (0x9b is a one-character CSI to some terminals), and the
/// bidirectional marks, overrides and isolates and the Unicode line separators, which
/// make a name read as something else ("Trojan Source").
pub fn is_terminal_control(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// `s` as a terminal may print it: every [`is_terminal_control`] character written as
/// its escape (`\n`, `\t`, `\r`, `\x1b`, `\u{202e}`), so it is seen, not obeyed. The
/// CLI passes every user- or agent-chosen text of its human output through this; what
/// needs no escape is borrowed, not copied.
pub fn terminal_safe(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_terminal_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if is_terminal_control(c) && (c as u32) < 0x100 => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if is_terminal_control(c) => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A command as one line, each word shell-quoted where it needs it (`'two words'`,
/// `'it'\''s'`): the quoting of `history --format gpusched` and of the dashboard's job
/// page (crates/server/assets/js/job.js, `quote`), so the three read the same. Not
/// escaped for a terminal: pass the line through [`terminal_safe`] to print it.
pub fn command_line(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
            {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// An error with every cause below it, `outer: inner: root`, as people read it: reqwest's
/// own words ("error sending request for url ...") say nothing of a refused certificate
/// or a refused connection, which only its sources do. A cause that repeats the one
/// above it is said once. (The agent, the gateway and the CLI word connection errors so.)
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(next) = cur {
        let text = next.to_string();
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cur = next.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_plain_text_borrowed() {
        assert!(matches!(
            terminal_safe("train-v2 ÄÖ 训练 🚀"),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            terminal_safe("evil\x1b]0;pwned\x07"),
            "evil\\x1b]0;pwned\\x07"
        );
        assert_eq!(terminal_safe("two\nlines\tand\r"), "two\\nlines\\tand\\r");
        assert_eq!(terminal_safe("del\x7f c1\u{9b}"), "del\\x7f c1\\x9b");
        assert_eq!(
            terminal_safe("abc\u{202e}fed\u{2066}"),
            "abc\\u{202e}fed\\u{2066}"
        );
        // Zero-width joiners in emoji are not controls: they stay.
        assert!(!is_terminal_control('\u{200d}'));
        assert!(is_terminal_control('\u{2028}'));
    }

    #[test]
    fn a_command_line_quotes_only_the_words_that_need_it() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            command_line(&words(&["python", "train.py", "--lr=0.1"])),
            "python train.py --lr=0.1"
        );
        assert_eq!(
            command_line(&words(&["sh", "-c", "echo 'hi' && sleep 1", ""])),
            r"sh -c 'echo '\''hi'\'' && sleep 1' ''"
        );
    }

    #[test]
    fn one_is_singular_and_everything_else_plural() {
        assert_eq!(count(1u32, "GPU"), "1 GPU");
        assert_eq!(count(0u32, "GPU"), "0 GPUs");
        assert_eq!(count(2u64, "time"), "2 times");
        assert_eq!(count_as(1u32, "job waits", "jobs wait"), "1 job waits");
        assert_eq!(count_as(5u32, "job waits", "jobs wait"), "5 jobs wait");
        assert_eq!(agree(1u32, "comes", "come"), "comes");
        assert_eq!(agree(7u32, "comes", "come"), "come");
    }
}
