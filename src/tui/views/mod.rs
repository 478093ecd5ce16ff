//! Drawing: pure functions of the app state. Nothing here waits, reads files or changes what the
//! app shows; the only thing written back is where things were drawn (for mouse hits).

mod fix;
mod home;
mod memory;
pub mod pending;
mod sweep;
mod task;
mod text;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Row, Table, Wrap};

pub use crate::tui::highlighted::CodeCache;

use super::app::{App, Screen};
use super::modal::Modal;

/// Below this the screen only says it is too small (and never panics).
const MIN: (u16, u16) = (20, 6);

pub fn draw(frame: &mut Frame, app: &mut App) {
    let area = frame.area();
    if area.width < MIN.0 || area.height < MIN.1 {
        frame.render_widget(Paragraph::new("rgd: enlarge the terminal").wrap(Wrap { trim: true }), area);
        return;
    }
    let [top, body, bottom] = Layout::vertical([Constraint::Length(1), Constraint::Min(1), Constraint::Length(1)]).areas(area);
    frame.render_widget(Paragraph::new(title_line(app)), top);
    // `rgd fix --tui`: the fix's panel on the left, the attempt's screens beside it.
    let body = match &app.fix {
        Some(panel) if body.width >= 2 * fix::WIDTH => {
            let [left, rest] = Layout::horizontal([Constraint::Length(fix::WIDTH), Constraint::Min(1)]).areas(body);
            fix::draw(frame, left, panel);
            rest
        }
        _ => body,
    };
    match app.screen().clone() {
        Screen::Home => home::draw(frame, body, app),
        Screen::Sweep => sweep::draw(frame, body, app),
        Screen::Task(id) => task::draw(frame, body, app, &id),
        Screen::Memory => memory::draw(frame, body, app),
    }
    frame.render_widget(Paragraph::new(hint_line(app)), bottom);
    // The form is drawn by the home view it belongs to; the others float over any screen.
    for modal in &app.modals {
        match modal {
            Modal::Help => help(frame, area),
            Modal::ConfirmStop => confirm(frame, area),
            Modal::Text {
                title,
                lines,
                scroll,
                targets,
                selected,
                ..
            } => text_popup(frame, area, title, lines, *scroll, selected.map(|i| targets[i])),
            Modal::Form(_) | Modal::Filter(_) => {}
        }
    }
}

fn title_line(app: &App) -> Line<'static> {
    let mut spans = vec![Span::styled(" rgd ", Style::new().bold().reversed())];
    let where_ = match app.screen() {
        Screen::Home => "home".to_string(),
        Screen::Sweep => "sweep".to_string(),
        Screen::Task(id) => format!("task {id}"),
        Screen::Memory => "memory".to_string(),
    };
    spans.push(Span::raw(format!(" {where_}")));
    if let Some(m) = &app.model.manifest {
        spans.push(Span::styled(
            format!(
                "  run {}  {}  {}",
                crate::text::short_id(&m.run_id),
                m.dataset.name,
                m.model_label()
            ),
            Style::new().dim(),
        ));
    }
    if let Some(live) = &app.live {
        let (label, color) = match &live.outcome {
            None if app.stopped => ("stopped", Color::Yellow),
            None => ("● live", Color::Green),
            Some(Ok(_)) => ("finished", Color::Cyan),
            Some(Err(_)) => ("failed", Color::Red),
        };
        spans.push(Span::styled(format!("  {label}"), Style::new().fg(color)));
    }
    if let Some(r) = &app.replay {
        spans.push(Span::styled(
            format!(
                "  replay {}/{} {} {}",
                r.cursor,
                r.events.len(),
                if r.playing { "▶" } else { "⏸" },
                r.speed_label()
            ),
            Style::new().fg(Color::Magenta),
        ));
    }
    Line::from(spans)
}

fn hint_line(app: &App) -> Line<'static> {
    if let Some(s) = &app.status {
        return Line::from(Span::styled(format!(" {s}"), Style::new().fg(Color::Yellow)));
    }
    let hint = match app.modal() {
        Some(Modal::Form(_)) => "Tab/↑↓ field  ←→ choose  Enter start  Esc cancel",
        Some(Modal::Filter(_)) => "type to filter  Enter keep  Esc clear",
        _ => match app.screen() {
            Screen::Home => "↑↓ select  Enter open (replay)  n new run  m memory  r refresh  ? help  q quit",
            Screen::Memory => "↑↓ select  / search  ←→ scroll entry  ? help  Esc back",
            Screen::Sweep => "↑↓ select  Enter open task  / filter  s sort  ? help  Esc back",
            Screen::Task(_) => "←→ iteration  Tab pane  ↑↓ scroll  d diff  z zoom  w write code  ? help  Esc back",
        },
    };
    let mut spans = vec![Span::styled(format!(" {hint}"), Style::new().dim())];
    if app.replay.is_some() {
        spans.push(Span::styled(
            "   space play  . , step  ] [ iteration  + - speed",
            Style::new().fg(Color::Magenta).dim(),
        ));
    }
    Line::from(spans)
}

/// A rectangle of at most `w` x `h` centred in `area`.
pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

fn help(frame: &mut Frame, area: Rect) {
    let rows: Vec<Row> = super::keymap::help_rows()
        .map(|r| Row::new(vec![Span::styled(r.keys_label, Style::new().bold()), Span::raw(r.what)]))
        .collect();
    let popup = centered(area, 96, rows.len() as u16 + 2);
    let table = Table::new(rows, [Constraint::Length(26), Constraint::Min(10)]).block(Block::bordered().title(" keys (? or Esc closes) "));
    frame.render_widget(Clear, popup);
    frame.render_widget(table, popup);
}

/// A scrollable text popup, nearly the whole screen.
fn text_popup(frame: &mut Frame, area: Rect, title: &str, lines: &[String], scroll: u16, selected: Option<u16>) {
    let popup = centered(area, area.width.saturating_sub(4), area.height.saturating_sub(2));
    let text: Vec<Line> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| match selected == Some(i as u16) {
            true => Line::styled(l.clone(), Style::new().reversed()),
            false => Line::raw(l.clone()),
        })
        .collect();
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(text)
            .scroll((scroll, 0))
            .block(Block::bordered().title(title.to_string())),
        popup,
    );
}

fn confirm(frame: &mut Frame, area: Rect) {
    let popup = centered(area, 64, 5);
    let text = vec![
        Line::from("A run is live. Stop it and quit?"),
        Line::from(Span::styled(
            "Finished tasks stay recorded; `rgd sweep --resume ID` continues.  y / n",
            Style::new().add_modifier(Modifier::DIM),
        )),
    ];
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(text)
            .wrap(Wrap { trim: true })
            .block(Block::bordered().title(" stop the run? ")),
        popup,
    );
}
