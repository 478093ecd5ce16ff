//! Reading agents' answers that are not code.

/// Keywords from the Keywords agent: comma, semicolon or newline separated, list markers and
/// quotes stripped, case-insensitively deduplicated.
pub fn parse_keywords(answer: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for part in answer.split([',', '\n', ';']) {
        let k = part
            .trim()
            .trim_start_matches(['-', '*', '•'])
            .trim()
            .trim_matches(['`', '"', '\'', '.'])
            .trim();
        if !k.is_empty() && k.len() <= 60 && !out.iter().any(|o| o.eq_ignore_ascii_case(k)) {
            out.push(k.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn keywords_are_split_cleaned_and_deduplicated() {
        assert_eq!(
            super::parse_keywords("- sorting, matrix rows\n* `sum`\nSorting"),
            ["sorting", "matrix rows", "sum"]
        );
    }
}
