//! The task view: the iteration timeline and, for the selected iteration, the guidance the Debug
//! agent worked from, its code (or the diff against the previous iteration), the visible test
//! table and the Feedback agent's analysis. Answers still streaming show as they arrive.

use std::sync::Arc;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph, Wrap};

use super::text::{diff_lines, dim, plain, window};
use crate::agents::Agent;
use crate::sandbox::TestStatus;
use crate::tui::app::{App, Pane, TaskState};
use crate::tui::highlighted::CodeCache;
use crate::tui::model::{Call, Iteration, TaskView};

/// What the panes draw from. The task is borrowed, not copied: a live view redraws up to 60 times
/// a second, and a task holds every prompt and answer of every iteration.
struct Panes<'a> {
    task: &'a TaskView,
    shown: Option<usize>,
    state: &'a TaskState,
    code_cache: &'a mut CodeCache,
    drawn: &'a mut Vec<(Pane, Rect)>,
    code_first: &'a mut Option<u16>,
    /// The run's strategy, for the panes' titles.
    strategy: &'a str,
}

pub fn draw(frame: &mut Frame, area: Rect, app: &mut App, id: &str) {
    let shown = app.shown_iteration();
    let App {
        model,
        task: state,
        code_cache,
        layout,
        ..
    } = app;
    layout.panes.clear();
    layout.code_first = None;
    let Some(task) = model.task(id) else {
        frame.render_widget(Paragraph::new(format!("no task {id} in this run")), area);
        return;
    };
    let [head, body] = Layout::vertical([Constraint::Length(2), Constraint::Min(3)]).areas(area);
    draw_head(frame, head, task);
    // A paused task shows what it will do next, below the panes.
    let body = match &task.paused {
        Some((reason, pending)) => {
            let [panes, debugger] = Layout::vertical([Constraint::Percentage(40), Constraint::Min(6)]).areas(body);
            super::pending::draw(frame, debugger, reason, pending);
            panes
        }
        None => body,
    };
    let strategy = model.manifest.as_ref().map_or("rgd", |m| m.strategy.as_str());
    let mut panes = Panes {
        task,
        shown,
        state,
        code_cache,
        drawn: &mut layout.panes,
        code_first: &mut layout.code_first,
        strategy,
    };
    let small = body.width < 90 || body.height < 16;
    if state.zoom || small {
        draw_pane(frame, body, &mut panes, state.focus);
        return;
    }
    let [timeline, rest] = Layout::horizontal([Constraint::Length(28), Constraint::Min(40)]).areas(body);
    let [top, bottom] = Layout::vertical([Constraint::Percentage(58), Constraint::Percentage(42)]).areas(rest);
    let [guidance, code] = Layout::horizontal([Constraint::Percentage(38), Constraint::Percentage(62)]).areas(top);
    let [tests, analysis] = Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(bottom);
    for (pane, rect) in [
        (Pane::Timeline, timeline),
        (Pane::Guidance, guidance),
        (Pane::Code, code),
        (Pane::Tests, tests),
        (Pane::Analysis, analysis),
    ] {
        draw_pane(frame, rect, &mut panes, pane);
    }
}

fn draw_head(frame: &mut Frame, area: Rect, task: &TaskView) {
    let result = match &task.result {
        Some(r) => format!(
            "{:?} after {} iteration(s), {:.1}s{}",
            r.status,
            r.iterations,
            r.seconds,
            r.error.as_ref().map(|e| format!(" — {e}")).unwrap_or_default()
        ),
        None => "in progress".into(),
    };
    let lines = vec![
        Line::from(vec![
            Span::styled(format!(" {} ", task.id), Style::new().bold()),
            Span::raw(format!("entry point {}  ", task.entry_point)),
            Span::styled(task.stage.label(), super::sweep::stage_style(task.stage)),
            Span::raw(if task.attempt > 1 {
                format!("  attempt {}", task.attempt)
            } else {
                String::new()
            }),
        ]),
        Line::from(vec![
            Span::styled(
                format!(
                    " {result}   visible tests {}   hidden tests {}",
                    task.visible_tests.len(),
                    task.hidden_tests
                ),
                Style::new().dim(),
            ),
            Span::styled(edits(task), Style::new().fg(Color::Magenta)),
        ]),
    ];
    frame.render_widget(Paragraph::new(lines), area);
}

/// "  ✎ by hand: code @1, guidance @2": what the debugger changed, where.
fn edits(task: &TaskView) -> String {
    if task.interventions.is_empty() {
        return String::new();
    }
    let all: Vec<String> = task.interventions.iter().map(|(k, field, _)| format!("{field} @{k}")).collect();
    format!("   ✎ by hand: {}", all.join(", "))
}

fn block(pane: Pane, strategy: &str, focused: bool, note: &str) -> Block<'static> {
    let title = format!(" {}{} ", pane.title_for(strategy), note);
    let b = Block::bordered().title(title);
    if focused {
        b.border_type(BorderType::Thick).border_style(Style::new().fg(Color::Cyan))
    } else {
        b
    }
}

fn streaming_note(call: Option<&Call>) -> &'static str {
    match call {
        Some(c) if !c.done => " (streaming…)",
        Some(c) if c.error.is_some() => " (failed)",
        _ => "",
    }
}

fn call_text(call: Option<&Call>, waiting: &str) -> Vec<Line<'static>> {
    match call {
        None => vec![dim(waiting)],
        Some(c) => {
            let mut lines = plain(&c.text);
            if let Some(e) = &c.error {
                lines.push(Line::styled(format!("error: {e}"), Style::new().fg(Color::Red)));
            } else if !c.done {
                lines.push(Line::raw("▌"));
            }
            if c.retries > 0 {
                lines.push(dim(&format!("({} retr{})", c.retries, if c.retries == 1 { "y" } else { "ies" })));
            }
            for note in &c.notes {
                lines.push(Line::styled(format!("⚠ {note}"), Style::new().fg(Color::Yellow)));
            }
            lines
        }
    }
}

fn draw_pane(frame: &mut Frame, area: Rect, cx: &mut Panes<'_>, pane: Pane) {
    cx.drawn.push((pane, area));
    let (task, shown) = (cx.task, cx.shown);
    let focused = cx.state.focus == pane;
    let scroll = cx.state.scroll_of(pane, Some(task));
    let it: Option<&Iteration> = shown.and_then(|i| task.iterations.get(i));
    let inner_height = area.height.saturating_sub(2);
    match pane {
        Pane::Timeline => {
            let mut lines: Vec<Line> = task
                .iterations
                .iter()
                .enumerate()
                .map(|(i, it)| timeline_line(i, it, Some(i) == shown))
                .collect();
            if lines.is_empty() {
                lines.push(dim("not started"));
            }
            let (lines, _) = window(
                &lines,
                scroll.max(shown.unwrap_or(0).saturating_sub(inner_height as usize / 2) as u16),
                inner_height,
            );
            frame.render_widget(Paragraph::new(lines).block(block(pane, cx.strategy, focused, "")), area);
        }
        Pane::Guidance => {
            let call = shown.and_then(|i| task.guidance_for(i));
            let mut lines = call_text(call, "waiting for the Guide agent…");
            if shown.is_none() {
                lines = plain(&task.prompt);
            }
            let note = streaming_note(call);
            frame.render_widget(
                Paragraph::new(lines)
                    .wrap(Wrap { trim: false })
                    .scroll((scroll, 0))
                    .block(block(pane, cx.strategy, focused, note)),
                area,
            );
        }
        Pane::Code => {
            let debug = it.and_then(|i| i.call_of(Agent::Debug));
            // Highlighted code is shared with the cache, not copied: a frame touches only visible lines.
            let (lines, note): (Arc<Vec<Line<'static>>>, String) = match it {
                Some(i) if cx.state.show_diff => match &i.diff {
                    Some(d) => (Arc::new(diff_lines(d)), " — diff vs previous iteration".into()),
                    None => (
                        Arc::new(vec![dim("no diff: first code, or no code in one of the two iterations")]),
                        " — diff".into(),
                    ),
                },
                Some(i @ Iteration { code: Some(code), .. }) => {
                    let problem = i.problem.as_ref().map(|p| format!(" — {p:?}")).unwrap_or_default();
                    (cx.code_cache.lines(code), problem)
                }
                Some(_) if debug.is_some_and(|c| !c.done) => (Arc::new(call_text(debug, "")), " (streaming…)".into()),
                Some(i) => match &i.problem {
                    Some(p) => (Arc::new(call_text(debug, "")), format!(" — no usable code: {p:?}")),
                    None => (Arc::new(vec![dim("waiting for the Debug agent…")]), String::new()),
                },
                None => (Arc::new(vec![dim("no iteration yet")]), String::new()),
            };
            let (visible, first) = window(&lines, scroll, inner_height);
            *cx.code_first = Some(first);
            frame.render_widget(Paragraph::new(visible).block(block(pane, cx.strategy, focused, &note)), area);
        }
        Pane::Tests => {
            let lines = test_lines(task, it);
            frame.render_widget(
                Paragraph::new(lines)
                    .wrap(Wrap { trim: false })
                    .scroll((scroll, 0))
                    .block(block(pane, cx.strategy, focused, "")),
                area,
            );
        }
        Pane::Analysis => {
            let call = it.and_then(|i| i.call_of(Agent::Feedback));
            let mut lines = call_text(call, "no analysis in this iteration (tests passed, or not yet run)");
            match it.and_then(|i| i.memory_hit.as_ref()) {
                Some(Some(h)) => {
                    lines.push(Line::raw(""));
                    lines.push(Line::styled(
                        format!(
                            "memory: {} (hybrid {:.3} = SBERT {:.3}, BM25 {:.2})",
                            h.task_id, h.score, h.sbert, h.bm25
                        ),
                        Style::new().bold().fg(Color::Magenta),
                    ));
                    lines.extend(plain(&h.guidance));
                }
                Some(None) => {
                    lines.push(Line::raw(""));
                    lines.push(dim("memory: nothing similar enough above the threshold"));
                }
                None => {}
            }
            frame.render_widget(
                Paragraph::new(lines).wrap(Wrap { trim: false }).scroll((scroll, 0)).block(block(
                    pane,
                    cx.strategy,
                    focused,
                    streaming_note(call),
                )),
                area,
            );
        }
    }
}

fn timeline_line(i: usize, it: &Iteration, selected: bool) -> Line<'static> {
    let live = it.calls.iter().any(|c| !c.done);
    let (mark, style) = match (it.visible_counts(), it.hidden) {
        (_, Some((p, n))) if p == n => ("✓", Style::new().fg(Color::Green)),
        (_, Some(_)) => ("✗", Style::new().fg(Color::Red)),
        (Some((p, n)), None) if p < n => ("✗", Style::new().fg(Color::Red)),
        _ if live => ("…", Style::new().fg(Color::Yellow)),
        _ if it.problem.is_some() => ("!", Style::new().fg(Color::Red)),
        _ => (" ", Style::new()),
    };
    let visible = it.visible_counts().map(|(p, n)| format!(" vis {p}/{n}")).unwrap_or_default();
    let hidden = it.hidden.map(|(p, n)| format!(" hid {p}/{n}")).unwrap_or_default();
    let line = Line::from(vec![
        Span::raw(if selected { "▸ " } else { "  " }),
        Span::raw(format!("{:>2} ", i + 1)),
        Span::styled(mark, style),
        Span::raw(format!("{visible}{hidden}")),
    ]);
    if selected { line.style(Style::new().bold()) } else { line }
}

fn test_lines(task: &TaskView, it: Option<&Iteration>) -> Vec<Line<'static>> {
    let mut lines = test_run_lines(task, it);
    if let Some(test) = &task.flagged {
        lines.insert(
            0,
            Line::styled(
                format!("⚑ flagged by an agent as contradicting the specification: {test}"),
                Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            ),
        );
    }
    lines
}

fn test_run_lines(task: &TaskView, it: Option<&Iteration>) -> Vec<Line<'static>> {
    let Some(it) = it else {
        return task.visible_tests.iter().map(|t| Line::raw(format!("· {t}"))).collect();
    };
    let mut lines = Vec::new();
    if let Some(own) = &it.own {
        lines.push(Line::styled("the model's own tests", Style::new().bold()));
        report_lines(&mut lines, own, &task.own_tests);
        lines.push(Line::raw(""));
    }
    let Some(report) = &it.visible else {
        lines.push(dim(if it.own.is_some() {
            "visible tests: not run (they judge the final program)"
        } else {
            "not run yet"
        }));
        lines.extend(task.visible_tests.iter().map(|t| Line::raw(format!("· {t}"))));
        return lines;
    };
    if it.own.is_some() {
        lines.push(Line::styled(
            "visible tests (judging; never shown to the model)",
            Style::new().bold(),
        ));
    }
    report_lines(&mut lines, report, &task.visible_tests);
    lines.push(Line::raw(""));
    lines.push(match it.hidden {
        Some((p, n)) => Line::styled(
            format!("hidden tests: {p}/{n} passed (details are never shown to the agents, nor here)"),
            if p == n {
                Style::new().fg(Color::Green)
            } else {
                Style::new().fg(Color::Red)
            },
        ),
        None => dim("hidden tests: not run (they run once the visible tests pass)"),
    });
    lines
}

/// One test run's lines: a mark and label per test, what went wrong, how the program ended.
fn report_lines(lines: &mut Vec<Line<'static>>, report: &crate::sandbox::RunReport, labels: &[String]) {
    if let Some(why) = &report.best_effort {
        lines.push(Line::styled(
            format!("{}: {why}", crate::repo::run::isolate::Isolation::BEST_EFFORT),
            Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
        ));
    }
    if let Some(err) = &report.setup_error {
        lines.push(Line::styled(
            format!(
                "program failed to load: {} {}",
                err.exc_type.clone().unwrap_or_default(),
                err.exc_msg.clone().unwrap_or_default()
            ),
            Style::new().fg(Color::Red),
        ));
    }
    for t in &report.tests {
        let label = labels.get(t.index).cloned().unwrap_or_else(|| format!("test {}", t.index + 1));
        let (mark, style) = match t.status {
            TestStatus::Passed => ("✓", Style::new().fg(Color::Green)),
            TestStatus::Failed => ("✗", Style::new().fg(Color::Red)),
            TestStatus::Tampered => ("⚠ tampered", Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD)),
            _ => ("!", Style::new().fg(Color::Red)),
        };
        lines.push(Line::from(vec![Span::styled(format!("{mark} "), style), Span::raw(label)]));
        if t.status != TestStatus::Passed {
            let mut detail = Vec::new();
            if let Some(g) = &t.got {
                detail.push(format!("got {g}"));
            }
            if let Some(e) = &t.expected {
                detail.push(format!("expected {e}"));
            }
            if let Some(x) = &t.exc_type {
                detail.push(format!(
                    "{x}: {}{}",
                    t.exc_msg.clone().unwrap_or_default(),
                    t.line.map(|l| format!(" (line {l})")).unwrap_or_default()
                ));
            }
            if detail.is_empty() {
                detail.push(format!("{:?}", t.status).to_lowercase());
            }
            lines.push(Line::styled(format!("    {}", detail.join("; ")), Style::new().dim()));
        }
    }
    if let Some(end) = &report.abnormal_end {
        lines.push(Line::styled(end.clone(), Style::new().fg(Color::Red)));
    }
}
