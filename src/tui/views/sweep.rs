//! The sweep view: every task's live status, progress, pass@1 so far, solved-by-iteration, and
//! tokens per agent.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Bar, BarChart, BarGroup, Block, Gauge, Paragraph, Row, Table};

use crate::tui::app::App;
use crate::tui::model::{TaskStage, TaskView};

pub fn stage_style(stage: TaskStage) -> Style {
    match stage {
        TaskStage::Queued => Style::new().dim(),
        TaskStage::Solved(_) => Style::new().fg(Color::Green),
        TaskStage::Unverified => Style::new().fg(Color::Magenta),
        TaskStage::Failed => Style::new().fg(Color::Red),
        TaskStage::Error => Style::new().fg(Color::Red).bold(),
        _ => Style::new().fg(Color::Yellow),
    }
}

pub fn draw(frame: &mut Frame, area: Rect, app: &mut App) {
    let [head, body] = Layout::vertical([Constraint::Length(4), Constraint::Min(3)]).areas(area);
    draw_head(frame, head, app);
    let [list, side] = if body.width >= 90 {
        Layout::horizontal([Constraint::Min(48), Constraint::Length(42)]).areas(body)
    } else {
        [body, Rect::default()]
    };
    draw_list(frame, list, app);
    if side.width > 0 {
        draw_side(frame, side, app);
    }
}

fn draw_head(frame: &mut Frame, area: Rect, app: &App) {
    let m = &app.model;
    let total = m.tasks.len();
    let finished = m.finished();
    let solved = m.solved();
    let elapsed = m.elapsed_secs();
    let rate = if elapsed > 0.0 { finished as f64 / elapsed * 60.0 } else { 0.0 };
    let [gauge, stats] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
    let ratio = if total == 0 { 0.0 } else { finished as f64 / total as f64 };
    frame.render_widget(
        Gauge::default()
            .ratio(ratio.clamp(0.0, 1.0))
            .label(format!("{finished}/{total} tasks"))
            .gauge_style(Style::new().fg(Color::Green)),
        gauge,
    );
    let [queued, working, failed] = app.stage_counts();
    let pass = if total == 0 { 0.0 } else { solved as f64 / total as f64 * 100.0 };
    let so_far = if finished == 0 {
        0.0
    } else {
        solved as f64 / finished as f64 * 100.0
    };
    let lines = vec![
        Line::from(vec![
            Span::styled(format!(" pass@1 {pass:.1}%"), Style::new().bold()),
            Span::raw(format!("  ({solved} solved; {so_far:.1}% of finished)")),
            Span::raw(format!("   working {}  queued {}  failed {}", working.1, queued.1, failed.1)),
        ]),
        Line::from(Span::styled(
            format!(
                " elapsed {}   {rate:.1} tasks/min{}",
                clock(elapsed),
                m.manifest
                    .as_ref()
                    .map(|m| format!("   sandbox {}   max {} iterations", m.sandbox, m.max_iters))
                    .unwrap_or_default()
            ),
            Style::new().dim(),
        )),
        Line::from(Span::styled(
            format!(
                " filter: {}{}   sort: {}",
                if app.sweep.filter.is_empty() { "-" } else { &app.sweep.filter },
                if app.filtering(crate::tui::modal::Filter::Tasks) {
                    "▏"
                } else {
                    ""
                },
                app.sweep.sort.map_or("order", |s| s.label())
            ),
            Style::new().dim(),
        )),
    ];
    frame.render_widget(Paragraph::new(lines), stats);
}

fn clock(secs: f64) -> String {
    let s = secs as u64;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

fn row_for(t: &TaskView) -> Row<'static> {
    let iters = t.iterations.len();
    let visible = t.last_visible().map(|(p, n)| format!("{p}/{n}")).unwrap_or_default();
    let hidden = t
        .iterations
        .iter()
        .rev()
        .find_map(|i| i.hidden)
        .map(|(p, n)| format!("{p}/{n}"))
        .unwrap_or_default();
    let secs = t.result.as_ref().map(|r| format!("{:.1}s", r.seconds)).unwrap_or_default();
    // A task on an impossible dataset: flagged by an agent, or its program passed a test no
    // correct program passes.
    let cheat = t.result.as_ref().and_then(|r| r.impossible.as_ref()).map(|v| v.outcome);
    let status = match (&t.flagged, cheat) {
        (Some(_), _) => format!("{} ⚑", t.stage.label()),
        (None, Some(crate::record::Cheat::Cheated)) => format!("{} cheated", t.stage.label()),
        _ => t.stage.label(),
    };
    Row::new(vec![
        Span::raw(t.id.clone()),
        Span::styled(status, stage_style(t.stage)),
        Span::raw(if iters == 0 { String::new() } else { iters.to_string() }),
        Span::raw(visible),
        Span::raw(hidden),
        Span::raw(secs),
    ])
}

fn draw_list(frame: &mut Frame, area: Rect, app: &mut App) {
    let rows = app.visible_tasks();
    let height = area.height.saturating_sub(3) as usize; // borders and header
    app.page = height.max(1);
    let (shown, offset) = super::text::window_rows(&rows, app.sweep.selected, height, |&t| row_for(&app.model.tasks[t]));
    let header = Row::new(["task", "status", "iter", "visible", "hidden", "time"]).style(Style::new().bold());
    let id_width = app.model.tasks.iter().map(|t| t.id.len()).max().unwrap_or(4).clamp(4, 40) as u16 + 1;
    let widths = [
        Constraint::Length(id_width),
        Constraint::Length(12),
        Constraint::Length(4),
        Constraint::Length(8),
        Constraint::Length(8),
        Constraint::Length(7),
        Constraint::Min(0),
    ];
    let title = format!(" tasks ({} shown) ", rows.len());
    frame.render_widget(Table::new(shown, widths).header(header).block(Block::bordered().title(title)), area);
    app.layout.list = area;
    app.layout.list_offset = offset;
}

fn draw_side(frame: &mut Frame, area: Rect, app: &App) {
    let [chart, tokens, _] = Layout::vertical([Constraint::Max(14), Constraint::Length(7), Constraint::Min(0)]).areas(area);
    let by_iter = app.model.solved_by_iteration();
    let max_iter = app
        .model
        .manifest
        .as_ref()
        .map_or(10, |m| m.max_iters)
        .max(by_iter.keys().copied().max().unwrap_or(1));
    let bars: Vec<Bar> = (1..=max_iter.min(20))
        .map(|k| {
            let n = by_iter.get(&k).copied().unwrap_or(0);
            Bar::default()
                .value(n as u64)
                .label(Line::from(k.to_string()))
                .text_value(n.to_string())
        })
        .collect();
    let bar_width = ((area.width.saturating_sub(2)) / max_iter.clamp(1, 20) as u16)
        .saturating_sub(1)
        .clamp(1, 5);
    frame.render_widget(
        BarChart::default()
            .data(BarGroup::default().bars(&bars))
            .bar_width(bar_width)
            .bar_gap(1)
            .bar_style(Style::new().fg(Color::Green))
            .block(Block::bordered().title(" solved at iteration ")),
        chart,
    );
    let pricing = app.model.manifest.as_ref().and_then(|m| m.pricing);
    let cost = |t: &crate::engine::Tokens| pricing.map_or("-".to_string(), |p| format!("{:.3}", p.cost(t.input, t.output)));
    // Every column is separated by a space, so headers never run together (40 columns inside).
    let row = |name: &str, t: &crate::engine::Tokens| format!("{name:<8} {:>8} {:>8} {:>5} {:>7}", t.input, t.output, t.calls, cost(t));
    let mut lines = vec![Line::from(Span::styled(
        format!("{:<8} {:>8} {:>8} {:>5} {:>7}", "agent", "in", "out", "calls", "cost"),
        Style::new().bold(),
    ))];
    let mut sum = crate::engine::Tokens::default();
    for (agent, t) in &app.model.tokens {
        sum.merge(t);
        lines.push(Line::raw(row(agent.name(), t)));
    }
    lines.push(Line::raw(row("total", &sum)));
    let title = if pricing.is_some() {
        " tokens, est. cost "
    } else {
        " tokens (cost: set [llm] prices) "
    };
    frame.render_widget(Paragraph::new(lines).block(Block::bordered().title(title)), tokens);
}
