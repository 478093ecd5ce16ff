//! Home: recorded runs, what rgd is configured with, and the start-a-run form.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Row, Table, TableState, Wrap};

use super::centered;
use crate::tui::app::App;
use crate::tui::form::{CHOICES, FIELDS, Form};

pub fn draw(frame: &mut Frame, area: Rect, app: &mut App) {
    let [info, list] = Layout::vertical([Constraint::Length(app.home_info.len() as u16 + 2), Constraint::Min(3)]).areas(area);
    let header = Row::new(["run", "dataset", "model", "strategy", "pass@1", "tasks", "state", "created"]).style(Style::new().bold());
    let rows = app.runs.iter().map(|r| {
        let color = match r.state.as_str() {
            "running" => Color::Green,
            "interrupted" | "partial" => Color::Yellow,
            _ => Color::Reset,
        };
        let mark = if app.marked.contains(&r.run_id) { "*" } else { "" };
        // A Slurm sweep: its id, and one mark per shard after its state.
        let (id, state) = match &r.slurm {
            Some(s) => (s.sweep.as_str(), format!("{} {}", r.state, s.shards)),
            None => (r.run_id.as_str(), r.state.clone()),
        };
        Row::new(vec![
            Span::raw(format!("{mark}{}", crate::text::short_id(id))),
            Span::raw(r.dataset.clone()),
            Span::raw(r.model.clone()),
            Span::raw(r.strategy.clone()),
            Span::raw(format!("{:.1}%", r.pass_at_1() * 100.0)),
            Span::raw(format!("{}/{}", r.finished, r.tasks)),
            Span::styled(state, Style::new().fg(color)),
            Span::raw(r.created.clone()),
        ])
    });
    let widths = [
        Constraint::Length(10),
        Constraint::Length(14),
        Constraint::Fill(1),
        Constraint::Length(8),
        Constraint::Length(7),
        Constraint::Length(9),
        Constraint::Length(if app.runs.iter().any(|r| r.slurm.is_some()) { 22 } else { 11 }),
        Constraint::Length(16),
    ];
    let searching = matches!(app.modal(), Some(crate::tui::modal::Modal::Filter(crate::tui::modal::Filter::Runs)));
    let title = if searching {
        format!(" search all runs: {}▏ (Enter searches, Esc cancels) ", app.home.query)
    } else if app.runs.is_empty() {
        " recorded runs: none yet (n starts one) ".to_string()
    } else {
        format!(" recorded runs ({}) ", app.runs.len())
    };
    let table = Table::new(rows, widths)
        .header(header)
        .row_highlight_style(Style::new().reversed())
        .block(Block::bordered().title(title));
    let mut state = TableState::default().with_selected((!app.runs.is_empty()).then_some(app.home.selected));
    frame.render_stateful_widget(table, list, &mut state);
    app.layout.list = list;
    app.layout.list_offset = state.offset();

    let lines: Vec<Line> = app
        .home_info
        .iter()
        .map(|(k, v)| Line::from(vec![Span::styled(format!("{k:>9} "), Style::new().dim()), Span::raw(v.clone())]))
        .collect();
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: true })
            .block(Block::bordered().title(" rgd ")),
        info,
    );

    if let Some(form) = app.form() {
        draw_form(frame, area, form);
    }
}

/// The form as a popup. On a short terminal the fields scroll to keep the focused one in view,
/// and the status (starting, or what is wrong) stays on screen below them.
fn draw_form(frame: &mut Frame, area: Rect, form: &Form) {
    let mut status = Vec::new();
    if form.starting {
        status.push(Line::from(Span::styled(
            "starting… (the first run builds the sandbox: about a minute)",
            Style::new().fg(Color::Yellow),
        )));
    }
    if let Some(e) = &form.error {
        status.push(Line::from(Span::styled(e.clone(), Style::new().fg(Color::Red))));
    }
    let popup = centered(area, 72, FIELDS.len() as u16 * 2 + 3 + status.len() as u16 * 2);
    let mut fields = Vec::new();
    for (i, name) in FIELDS.iter().enumerate() {
        let focused = i == form.focus;
        let value = &form.values[i];
        let shown = if CHOICES.contains(&i) {
            format!("‹ {value} ›")
        } else {
            value.clone()
        };
        fields.push(Line::from(Span::styled(name.to_string(), Style::new().dim())));
        let style = if focused { Style::new().reversed() } else { Style::new() };
        fields.push(Line::from(vec![
            Span::raw(if focused { "› " } else { "  " }),
            Span::styled(format!("{shown}{}", if focused { "▏" } else { "" }), style),
        ]));
    }
    let mut block = Block::bordered().title(" start a run (Enter) ");
    let inner = block.inner(popup);
    // Each status line may wrap once in a narrow popup.
    let status_height = (status.len() as u16 * 2).min(inner.height / 2);
    let [fields_area, status_area] = Layout::vertical([Constraint::Min(0), Constraint::Length(status_height)]).areas(inner);
    let total = fields.len() as u16;
    let visible = fields_area.height;
    // The first offset that shows both lines of the focused field.
    let offset = (form.focus as u16 * 2 + 2)
        .saturating_sub(visible)
        .min(total.saturating_sub(visible));
    if visible < total {
        block = block.title_bottom(format!(" field {}/{} ↑↓ ", form.focus + 1, FIELDS.len()));
    }
    frame.render_widget(Clear, popup);
    frame.render_widget(block, popup);
    frame.render_widget(Paragraph::new(fields).scroll((offset, 0)), fields_area);
    frame.render_widget(Paragraph::new(status).wrap(Wrap { trim: false }), status_area);
}
