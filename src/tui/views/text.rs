//! Text helpers: highlighted code (computed once per code text), coloured diffs, and the visible
//! window of a long list of lines, so a 2,000-line pane costs only the lines on screen.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use ratatui::style::{Color, Style, Stylize};
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

pub fn diff_lines(diff: &str) -> Vec<Line<'static>> {
    diff.lines()
        .map(|l| {
            let style = if l.starts_with("+++") || l.starts_with("---") {
                Style::new().bold()
            } else if l.starts_with('+') {
                Style::new().fg(Color::Green)
            } else if l.starts_with('-') {
                Style::new().fg(Color::Red)
            } else if l.starts_with("@@") {
                Style::new().fg(Color::Cyan)
            } else {
                Style::new()
            };
            Line::styled(l.replace('\t', "    "), style)
        })
        .collect()
}

/// Plain text as lines (no wrapping here: the paragraph wraps).
pub fn plain(text: &str) -> Vec<Line<'static>> {
    text.lines().map(|l| Line::raw(l.replace('\t', "    "))).collect()
}

/// The lines that fit `height` rows from `scroll`, with the scroll clamped to the end.
pub fn window(lines: &[Line<'static>], scroll: u16, height: u16) -> (Vec<Line<'static>>, u16) {
    let max = lines.len().saturating_sub(height as usize);
    let start = (scroll as usize).min(max);
    (lines[start..(start + height as usize).min(lines.len())].to_vec(), start as u16)
}

pub fn dim(text: &str) -> Line<'static> {
    Line::from(Span::raw(text.to_string()).dim())
}

/// The table rows that fit `height` lines with `selected` visible (highlighted), built only for
/// those items: a 500-row list costs what fits on screen. Returns the rows and the first index.
pub fn window_rows<T>(
    items: &[T],
    selected: usize,
    height: usize,
    row: impl Fn(&T) -> ratatui::widgets::Row<'static>,
) -> (Vec<ratatui::widgets::Row<'static>>, usize) {
    let selected = selected.min(items.len().saturating_sub(1));
    let offset = if height == 0 { 0 } else { selected.saturating_sub(height - 1) };
    let rows = items
        .iter()
        .enumerate()
        .skip(offset)
        .take(height)
        .map(|(i, item)| {
            let r = row(item);
            if i == selected { r.style(Style::new().reversed()) } else { r }
        })
        .collect();
    (rows, offset)
}
