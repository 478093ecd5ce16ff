//! Text cut to a size: the helpers every room that prints or prompts uses, written once.

/// At most `width` characters, "…" marking a cut, so a column stays aligned with long names
/// (a width of 0 gives "", never an underflow).
pub fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let kept: String = text.chars().take(width.saturating_sub(1)).collect();
    if width == 0 { kept } else { format!("{kept}…") }
}

/// `text` whole when it has at most `max` characters; else its first `keep` characters followed
/// by `note`, which says what was cut.
pub fn clip(text: &str, max: usize, keep: usize, note: &str) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let kept: String = text.chars().take(keep).collect();
    format!("{kept}{note}")
}

/// A run's id as lists show it: its first ten characters (ids are unique well before that).
pub fn short_id(run_id: &str) -> &str {
    match run_id.char_indices().nth(10) {
        Some((end, _)) => &run_id[..end],
        None => run_id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_say_so_and_never_underflow() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 4), "abc");
        assert_eq!(fit("abc", 0), "");
        assert_eq!(clip("abcdef", 4, 2, " [cut]"), "ab [cut]");
        assert_eq!(clip("abcd", 4, 2, " [cut]"), "abcd");
        assert_eq!(short_id("20261126-222810-abcdef"), "20261126-2");
        assert_eq!(short_id("héllo"), "héllo");
    }
}
