//! `rgd fix --tui`'s panel, left of the attempt being watched: the suspects in rank order, each
//! marked by how its repair went, the pairs tried, the last notes, and once it ends the outcome
//! and the diff.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

use crate::tui::fix_panel::{FixPanel, Mark, attempt_line};

/// Below this width the panel is not drawn (the attempt's view keeps the screen).
pub const WIDTH: u16 = 46;

pub fn draw(frame: &mut Frame, area: Rect, panel: &FixPanel) {
    let mut lines: Vec<Line> = vec![Line::styled(
        format!("{} failing tests shown, {} passing kept hidden", panel.visible, panel.hidden),
        Style::new().dim(),
    )];
    lines.push(Line::raw(""));
    for (i, s) in panel.suspects.iter().enumerate() {
        let (mark, style) = match panel.mark(&s.target) {
            Mark::Running => ("▶", Style::new().fg(Color::Yellow).bold()),
            Mark::Fixed => ("✓", Style::new().fg(Color::Green)),
            Mark::Unverified => ("?", Style::new().fg(Color::Magenta)),
            Mark::Failed => ("✗", Style::new().fg(Color::Red)),
            Mark::Untried if i < panel.candidates => (" ", Style::new()),
            Mark::Untried => (" ", Style::new().dim()),
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{mark} {:>2}. ", i + 1), style),
            Span::styled(s.target.clone(), style),
            Span::styled(format!("  {:.2}", s.score), Style::new().dim()),
        ]));
    }
    let pairs: Vec<String> = panel.pairs().map(attempt_line).collect();
    if !pairs.is_empty() {
        lines.push(Line::raw(""));
        lines.push(Line::styled("pairs (no single repair fixed it)", Style::new().bold()));
        lines.extend(pairs.into_iter().map(|p| Line::raw(format!("  {p}"))));
    }
    // Why the last attempt failed, when it did.
    if let Some(a) = panel.attempts.iter().rev().find(|a| a.outcome.is_some() && !a.fixed) {
        lines.push(Line::raw(""));
        lines.push(Line::styled(attempt_line(a), Style::new().fg(Color::Red).dim()));
    }
    match &panel.finished {
        None => {}
        Some((Some(by), diff)) => {
            lines.push(Line::raw(""));
            lines.push(Line::styled(
                format!("fixed by {}", by.join(" + ")),
                Style::new().fg(Color::Green).bold(),
            ));
            lines.extend(diff.lines().map(diff_line));
        }
        Some((None, _)) => {
            lines.push(Line::raw(""));
            lines.push(Line::styled("not fixed", Style::new().fg(Color::Red).bold()));
        }
    }
    let title = match panel.attempts.iter().filter(|a| a.outcome.is_some()).count() {
        0 => " fix: suspects ".to_string(),
        n => format!(" fix: suspects, {n} tried "),
    };
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::bordered().title(title)),
        area,
    );
}

fn diff_line(line: &str) -> Line<'static> {
    let style = match line.chars().next() {
        Some('+') if !line.starts_with("+++") => Style::new().fg(Color::Green),
        Some('-') if !line.starts_with("---") => Style::new().fg(Color::Red),
        _ => Style::new().dim(),
    };
    Line::styled(line.to_string(), style)
}
