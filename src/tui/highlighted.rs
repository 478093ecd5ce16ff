//! Highlighted code as terminal lines, computed once per code text: the views redraw the same
//! code many times a second, and the app keeps the cache between frames.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

use crate::code::{Class, highlight};

fn style_of(class: Class) -> Style {
    let color = match class {
        Class::Keyword => Color::Magenta,
        Class::String => Color::Green,
        Class::Number | Class::Constant => Color::Yellow,
        Class::Comment => Color::DarkGray,
        Class::Function => Color::Blue,
        Class::Type => Color::Cyan,
        Class::Builtin => Color::Cyan,
        Class::Operator => Color::Reset,
    };
    Style::new().fg(color)
}

/// The highlighted lines of the last code shown (views redraw the same code many times).
#[derive(Default)]
pub struct CodeCache {
    key: Option<u64>,
    lines: Arc<Vec<Line<'static>>>,
}

impl CodeCache {
    pub fn lines(&mut self, code: &str) -> Arc<Vec<Line<'static>>> {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        code.hash(&mut h);
        let key = h.finish();
        if self.key != Some(key) {
            self.key = Some(key);
            self.lines = Arc::new(highlight_lines(code));
        }
        self.lines.clone()
    }
}

/// Numbered, highlighted lines.
pub fn highlight_lines(code: &str) -> Vec<Line<'static>> {
    let spans = highlight(code);
    let mut next = 0; // index into spans
    let mut out = Vec::new();
    let mut offset = 0;
    let width = code.lines().count().max(1).to_string().len();
    for (n, line) in code.split('\n').enumerate() {
        let start = offset;
        let end = start + line.len();
        offset = end + 1;
        let mut parts = vec![Span::styled(format!("{:>width$} ", n + 1), Style::new().dim())];
        let mut at = start;
        while next < spans.len() && spans[next].0.end <= start {
            next += 1;
        }
        let mut i = next;
        while i < spans.len() && spans[i].0.start < end {
            let (range, class) = &spans[i];
            let s = range.start.max(start);
            let e = range.end.min(end);
            if s > at {
                parts.push(Span::raw(code[at..s].replace('\t', "    ")));
            }
            if e > s {
                parts.push(Span::styled(code[s..e].replace('\t', "    "), style_of(*class)));
            }
            at = at.max(e);
            i += 1;
        }
        if at < end {
            parts.push(Span::raw(code[at..end].replace('\t', "    ")));
        }
        out.push(Line::from(parts));
    }
    if code.ends_with('\n') {
        out.pop();
    }
    out
}
