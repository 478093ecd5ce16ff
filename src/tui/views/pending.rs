//! The debugger's panel in the task view: the effect a paused task will run next, in full (an
//! agent call's exact messages and parameters, a test run's program and tests, a memory query),
//! and the keys that act on it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph, Wrap};

use crate::engine::Pending;

/// The panel's lines (also what the tests read).
pub fn lines(reason: &str, pending: &Pending) -> Vec<Line<'static>> {
    let mut out = vec![
        Line::from(vec![
            Span::styled(" ⏸ paused ", Style::new().fg(Color::Black).bg(Color::Yellow).bold()),
            Span::raw(format!(" before the {} ({reason})", pending.label())),
        ]),
        Line::from(Span::styled(keys(pending), Style::new().dim())),
        Line::default(),
    ];
    let text = |out: &mut Vec<Line<'static>>, s: &str| out.extend(s.lines().map(|l| Line::raw(l.to_string())));
    match pending {
        Pending::Agent {
            messages,
            params,
            memory_hit,
            ..
        } => {
            out.push(Line::from(Span::styled(
                format!(
                    "model {} · temperature {} · max tokens {}",
                    params.model, params.temperature, params.max_tokens
                ),
                Style::new().dim(),
            )));
            if let Some(hit) = memory_hit {
                out.push(Line::from(Span::styled(
                    format!(
                        "memory hit: {} (score {:.3}: sbert {:.3}, bm25 {:.2}) · D drops it",
                        hit.task_id, hit.score, hit.sbert, hit.bm25
                    ),
                    Style::new().fg(Color::Magenta),
                )));
            }
            for m in messages {
                out.push(Line::from(Span::styled(
                    format!("[{:?}]", m.role).to_lowercase(),
                    Style::new().fg(Color::Cyan),
                )));
                text(&mut out, &m.content);
            }
        }
        Pending::Tests { suite, code, tests } => {
            out.push(Line::from(Span::styled(
                format!("{} tests:", suite.name()),
                Style::new().fg(Color::Cyan),
            )));
            for t in tests {
                out.push(Line::raw(format!("  {}", t.replace('\n', " ⏎ "))));
            }
            out.push(Line::from(Span::styled("program:", Style::new().fg(Color::Cyan))));
            text(&mut out, code);
        }
        Pending::Trace { code, test } => {
            out.push(Line::raw(format!("traced test: {test}")));
            text(&mut out, code);
        }
        Pending::Memory { query } => {
            out.push(Line::from(Span::styled("query:", Style::new().fg(Color::Cyan))));
            text(&mut out, query);
        }
        Pending::Store { guidance, keywords } => {
            out.push(Line::raw(format!("keywords: {}", keywords.join(", "))));
            text(&mut out, guidance);
        }
    }
    out
}

fn keys(pending: &Pending) -> String {
    let edit = match pending {
        Pending::Agent { .. } => "e edit the prompt · G edit the guidance · ",
        Pending::Tests { .. } | Pending::Trace { .. } => "e edit the code · ",
        Pending::Memory { .. } => "e edit the query · ",
        Pending::Store { .. } => "",
    };
    format!(" c continue · s step · {edit}x skip · A abort · b breakpoints · p pause all")
}

pub fn draw(frame: &mut Frame, area: Rect, reason: &str, pending: &Pending) {
    let block = Block::bordered()
        .border_type(BorderType::Thick)
        .border_style(Style::new().fg(Color::Yellow))
        .title(" debugger ");
    frame.render_widget(Paragraph::new(lines(reason, pending)).block(block).wrap(Wrap { trim: false }), area);
}
