//! A visible test an agent says contradicts the task's specification (`--allow-flag`): a line
//! `CONTRADICTS: <test> BECAUSE: <why>` in its answer, naming one of the task's visible tests.

use serde::{Deserialize, Serialize};

/// A visible test flagged as contradicting the specification, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flag {
    /// The visible test, as the task has it.
    pub test: String,
    pub reason: String,
}

fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The flag in `answer`, when it names one of `visible` (the tests as the prompts showed them);
/// a flag naming no visible test is no flag.
pub fn parse_flag(answer: &str, visible: &[String]) -> Option<Flag> {
    let line = answer.lines().find(|l| l.contains("CONTRADICTS:"))?;
    let rest = line.split_once("CONTRADICTS:")?.1;
    let (test, reason) = rest.split_once("BECAUSE:").unwrap_or((rest, ""));
    let named = squash(test.trim().trim_matches('`').trim());
    if named.is_empty() {
        return None;
    }
    let test = visible
        .iter()
        .find(|v| squash(v) == named)
        .or_else(|| visible.iter().find(|v| named.len() > 5 && squash(v).contains(&named)))?;
    Some(Flag {
        test: test.clone(),
        reason: reason.trim().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_names_a_visible_test_or_is_no_flag() {
        let visible = vec!["assert f(1) == 3".to_string(), "assert f(2) == 3".to_string()];
        let answer = "1. The code returns 2.\nCONTRADICTS: `assert f(1) ==  3` BECAUSE: f adds one, so f(1) is 2";
        assert_eq!(
            parse_flag(answer, &visible),
            Some(Flag {
                test: "assert f(1) == 3".into(),
                reason: "f adds one, so f(1) is 2".into()
            })
        );
        assert_eq!(parse_flag("CONTRADICTS: assert f(9) == 0 BECAUSE: no", &visible), None);
        assert_eq!(parse_flag("the tests contradict nothing", &visible), None);
    }
}
