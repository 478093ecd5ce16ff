//! Text helpers: coloured diffs, and the visible window of a long list of lines, so a 2,000-line
//! pane costs only the lines on screen.

use ratatui::style::{Color, Style, Stylize};
use ratatui::text::{Line, Span};

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
