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

/// Reflexion's own unit tests read from the model's answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SelfTests {
    /// One `assert` each, calling the entry point, in the answer's order.
    pub kept: Vec<String>,
    /// The other `assert` lines, each with why it was dropped.
    pub dropped: Vec<String>,
}

/// Every line of the answer that starts with `assert` (fenced or not) is a candidate; it is kept
/// if it parses as one statement that calls `entry_point`, up to `max` tests, without repeats.
pub fn parse_self_tests(answer: &str, entry_point: &str, max: usize) -> SelfTests {
    let mut out = SelfTests::default();
    for line in answer.lines().map(str::trim).filter(|l| l.starts_with("assert")) {
        if out.kept.iter().any(|k| k == line) {
            continue;
        }
        let why = if !crate::code::parses_cleanly(line) {
            Some("does not parse")
        } else if !crate::code::is_assert_calling(line, entry_point) {
            Some("does not call the entry point")
        } else if out.kept.len() >= max {
            Some("over the limit")
        } else {
            None
        };
        match why {
            Some(why) => out.dropped.push(format!("{line}  ({why})")),
            None => out.kept.push(line.to_string()),
        }
    }
    out
}

/// One problem MapCoder's retrieval agent recalled.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recalled {
    pub description: String,
    pub code: String,
    pub planning: String,
}

/// MapCoder's retrieval answer: the recalled problems and the algorithm's tutorial.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recall {
    pub problems: Vec<Recalled>,
    pub algorithm: String,
}

/// The elements whose text is free prose or code: MapCoder wraps them in CDATA before parsing,
/// because models write `<`, `&` and `>` in code without escaping them.
const TEXT_ELEMENTS: [&str; 6] = ["description", "code", "planning", "algorithm", "explanation", "confidence"];

/// The answer's `<root>` element, parsed, with the text elements taken literally.
fn with_root<T>(answer: &str, read: impl FnOnce(roxmltree::Node) -> Result<T, String>) -> Result<T, String> {
    let start = answer.find("<root>").ok_or("the answer has no <root> element")?;
    let end = answer
        .rfind("</root>")
        .filter(|e| *e > start)
        .ok_or("the <root> element is not closed")?;
    let mut xml = answer[start..end + "</root>".len()].to_string();
    for tag in TEXT_ELEMENTS {
        xml = xml
            .replace(&format!("<{tag}>"), &format!("<{tag}><![CDATA["))
            .replace(&format!("</{tag}>"), &format!("]]></{tag}>"));
    }
    let doc = roxmltree::Document::parse(&xml).map_err(|e| format!("malformed XML: {e}"))?;
    read(doc.root_element())
}

fn child_text(node: roxmltree::Node, tag: &str) -> String {
    node.children()
        .find(|c| c.has_tag_name(tag))
        .map(|c| c.text().unwrap_or_default().trim().to_string())
        .unwrap_or_default()
}

/// MapCoder's recall: `<root><problem><description/><code/><planning/></problem>...<algorithm/></root>`.
pub fn parse_recall(answer: &str) -> Result<Recall, String> {
    with_root(answer, |root| {
        let problems: Vec<Recalled> = root
            .children()
            .filter(|c| c.has_tag_name("problem"))
            .map(|p| Recalled {
                description: child_text(p, "description"),
                code: child_text(p, "code"),
                planning: child_text(p, "planning"),
            })
            .filter(|p| !p.description.is_empty() || !p.planning.is_empty())
            .collect();
        let algorithm = child_text(root, "algorithm");
        if problems.is_empty() && algorithm.is_empty() {
            return Err("no <problem> with a description or plan, and no <algorithm>".into());
        }
        Ok(Recall { problems, algorithm })
    })
}

/// MapCoder's confidence in a plan: `<root><explanation/><confidence>0-100</confidence></root>`.
pub fn parse_confidence(answer: &str) -> Result<u32, String> {
    with_root(answer, |root| {
        let text = child_text(root, "confidence");
        let number = text.trim_end_matches('%').trim();
        let value: f64 = number.parse().map_err(|_| format!("the confidence {text:?} is not a number"))?;
        if !(0.0..=100.0).contains(&value) {
            return Err(format!("the confidence {value} is outside 0-100"));
        }
        Ok(value.round() as u32)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn self_tests_keep_parsing_asserts_that_call_the_entry_point() {
        let answer = "Here are tests:\n```python\nassert add(1, 2) == 3\nassert add(1, 2) == 3\n  assert add(0, 0) == 0\nassert sub(1, 1) == 0\nassert add(1,, 2) == 3\nassert add(2, 2) == 4\n```";
        let t = super::parse_self_tests(answer, "add", 2);
        assert_eq!(t.kept, ["assert add(1, 2) == 3", "assert add(0, 0) == 0"]);
        assert_eq!(t.dropped.len(), 3, "{:?}", t.dropped);
        assert!(t.dropped[0].ends_with("(does not call the entry point)"));
        assert!(t.dropped[1].ends_with("(does not parse)"));
        assert!(t.dropped[2].ends_with("(over the limit)"));
    }

    #[test]
    fn recall_reads_xml_with_unescaped_code_and_rejects_what_is_not() {
        let answer = "```xml\n<root>\n<problem>\n<description>Count pairs</description>\n<code>if a < b and b > 0 & 1: pass</code>\n<planning>1. loop</planning>\n</problem>\n<algorithm>Brute force</algorithm>\n</root>\n```";
        let r = super::parse_recall(answer).unwrap();
        assert_eq!(r.problems.len(), 1);
        assert_eq!(r.problems[0].code, "if a < b and b > 0 & 1: pass");
        assert_eq!(r.algorithm, "Brute force");
        assert!(super::parse_recall("no xml here").unwrap_err().contains("no <root>"));
        assert!(
            super::parse_recall("<root><problem><description>x</problem></root>")
                .unwrap_err()
                .contains("malformed XML")
        );
        assert!(super::parse_recall("<root></root>").is_err());
    }

    #[test]
    fn confidence_is_a_number_from_0_to_100() {
        let c = |s: &str| super::parse_confidence(&format!("<root><explanation>ok</explanation><confidence>{s}</confidence></root>"));
        assert_eq!(c("85"), Ok(85));
        assert_eq!(c("72.6%"), Ok(73));
        assert!(c("high").unwrap_err().contains("not a number"));
        assert!(c("150").unwrap_err().contains("outside"));
    }

    #[test]
    fn keywords_are_split_cleaned_and_deduplicated() {
        assert_eq!(
            super::parse_keywords("- sorting, matrix rows\n* `sum`\nSorting"),
            ["sorting", "matrix rows", "sum"]
        );
    }
}
