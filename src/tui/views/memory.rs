//! The memory browser: entries (or search hits with their hybrid, SBERT and BM25 scores) and the
//! selected entry in full, with the runs that were offered it.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Row, Table, Wrap};

use super::text::{dim, plain, window_rows};
use crate::tui::app::App;
use crate::tui::modal::Filter;

pub fn draw(frame: &mut Frame, area: Rect, app: &mut App) {
    let Some(browser) = &app.memory else { return };
    let [head, body] = Layout::vertical([Constraint::Length(2), Constraint::Min(3)]).areas(area);
    let status = match (&browser.pool, &browser.error) {
        (_, Some(e)) => Line::styled(format!(" {e}"), Style::new().fg(Color::Red)),
        (None, None) => Line::styled(
            " opening the memory pool (loading the embedding model)…",
            Style::new().fg(Color::Yellow),
        ),
        (Some(pool), None) => Line::raw(format!(
            " {} entries in {}{}",
            browser.entries.len(),
            pool.dir().display(),
            if pool.is_owner() { "" } else { " (served by another rgd process)" }
        )),
    };
    let editing = app.filtering(Filter::Memory);
    let search = Line::styled(
        format!(
            " search: {}{}",
            if browser.query.is_empty() && !editing {
                "- (/ to search)"
            } else {
                &browser.query
            },
            if editing { "▏" } else { "" }
        ),
        Style::new().dim(),
    );
    frame.render_widget(Paragraph::new(vec![status, search]), head);
    if browser.pool.is_none() {
        return;
    }
    let [list, detail] = if body.width >= 100 {
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(body)
    } else {
        Layout::vertical([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(body)
    };
    let rows = browser.rows();
    let height = list.height.saturating_sub(3) as usize;
    let selected = browser.selected.min(rows.len().saturating_sub(1));
    let (shown, _) = window_rows(&rows, selected, height, |(e, hit)| {
        let scores = hit.map_or(String::new(), |h| format!("{:.3} {:.3} {:5.1}", h.score, h.sbert, h.bm25));
        Row::new(vec![e.task_id.clone(), e.entry_point.clone(), scores])
    });
    let header = Row::new([
        "task",
        "entry point",
        if browser.hits.is_some() { "hybrid sbert  bm25" } else { "" },
    ])
    .style(Style::new().bold());
    let widths = [Constraint::Length(16), Constraint::Min(12), Constraint::Length(19)];
    frame.render_widget(
        Table::new(shown, widths)
            .header(header)
            .block(Block::bordered().title(format!(" entries ({}) ", rows.len()))),
        list,
    );
    app.page = height.max(1);

    let Some(&(e, _)) = rows.get(selected) else {
        frame.render_widget(Paragraph::new(vec![dim("no entry")]).block(Block::bordered()), detail);
        return;
    };
    let mut lines = vec![
        Line::from(vec![Span::styled("id ", Style::new().dim()), Span::raw(e.id.clone())]),
        Line::from(vec![
            Span::styled("run ", Style::new().dim()),
            Span::raw(e.run_id.clone().unwrap_or_else(|| "-".into())),
        ]),
        Line::from(vec![
            Span::styled("keywords ", Style::new().dim()),
            Span::raw(e.keywords.join(", ")),
        ]),
    ];
    let uses = browser.uses_of(&e.id).unwrap_or_default();
    lines.push(Line::styled(
        match browser.uses_of(&e.id) {
            None => "looking up the runs it was offered to…".to_string(),
            Some([]) => "offered to no task yet".to_string(),
            Some(u) => format!("offered {} time(s):", u.len()),
        },
        Style::new().bold(),
    ));
    lines.extend(
        uses.iter()
            .map(|(run, task)| Line::raw(format!("  run {} · {task}", crate::text::short_id(run)))),
    );
    for (title, text) in [("question", &e.question), ("guidance", &e.guidance), ("code", &e.code)] {
        lines.push(Line::raw(""));
        lines.push(Line::styled(title.to_string(), Style::new().bold().fg(Color::Cyan)));
        lines.extend(plain(text));
    }
    let scroll = app.task.scroll[0];
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0))
            .block(Block::bordered().title(format!(" {} ", e.task_id))),
        detail,
    );
}
