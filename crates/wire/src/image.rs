//! What a user may write as a container image reference (`submit --image REF`),
//! checked by the CLI, the server and the agent alike.

/// The longest reference accepted, in characters (registries allow 255 for the name
/// alone; a tag or digest adds to it).
pub const MAX_IMAGE_REF: usize = 512;

/// Why `image` is not a reference a node could run (empty, too long, whitespace or
/// control characters, a leading `-` a runtime would read as an option), or `Ok`.
/// Whether the image exists is the node's runtime's to say.
pub fn check_reference(image: &str) -> Result<(), String> {
    if image.is_empty() {
        return Err("the image reference is empty".to_string());
    }
    let len = image.chars().count();
    if len > MAX_IMAGE_REF {
        return Err(format!(
            "the image reference is {len} characters long; at most {MAX_IMAGE_REF} are accepted"
        ));
    }
    // What the schema's pattern refuses (`\s` and control characters; JSON Schema's
    // `\s` also holds U+FEFF, which Rust's whitespace does not).
    if let Some(c) = image
        .chars()
        .find(|c| c.is_whitespace() || c.is_control() || *c == '\u{feff}')
    {
        return Err(format!(
            "the image reference {image:?} contains {c:?}; references have no whitespace \
             or control characters (e.g. docker.io/library/python:3.12)"
        ));
    }
    if image.starts_with('-') {
        return Err(format!(
            "the image reference {image:?} starts with `-`; references start with a registry \
             or a name (e.g. docker.io/library/python:3.12)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_checked_for_what_no_runtime_accepts() {
        assert!(check_reference("docker.io/library/python:3.12").is_ok());
        assert!(check_reference("gpusched-test/busybox:1").is_ok());
        assert!(check_reference("/shared/images/torch.sif").is_ok());
        assert!(check_reference("").unwrap_err().contains("empty"));
        assert!(check_reference("a b").unwrap_err().contains("whitespace"));
        assert!(check_reference("a\u{7}b").unwrap_err().contains("control"));
        assert!(check_reference("a\u{feff}b").is_err());
        assert!(check_reference("--privileged")
            .unwrap_err()
            .contains("starts with `-`"));
        assert!(check_reference(&"a".repeat(513))
            .unwrap_err()
            .contains("at most 512"));
    }
}
