//! Counted nouns for the messages both the server and the CLI print, so no message says
//! "1 free GPUs" or "lost 1 times".

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

#[cfg(test)]
mod tests {
    use super::*;

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
