//! The report as ONE self-contained HTML page: inline CSS, charts as inline SVG drawn with
//! plotters, no script, no font or image from anywhere else.

use std::fmt::Write;

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::report::Report;
use crate::agents::Agent;

/// Text inside HTML.
fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em;max-width:1100px;color:#222}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;padding:4px 8px;text-align:right}\
th:first-child,td:first-child{text-align:left}th{background:#eee}h2{margin-top:2em}\
.note{color:#555;font-size:90%}code{font-size:85%}";

/// The whole page.
pub fn html(report: &Report) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>rgd report</title><style>{STYLE}</style></head><body>\n<h1>rgd report</h1>\n"
    );
    out.push_str("<p>pass@1 on each dataset: the hidden tests decide. In brackets, points against Direct.</p>\n");
    out.push_str(&table(report, &report.rows(false), |m, d| report.cell_text(m, d, "direct")));
    if !report.rows(true).is_empty() {
        out.push_str("<h2>RGD's ablations</h2><p>In brackets, points against full RGD.</p>\n");
        out.push_str(&table(report, &report.rows(true), |m, d| report.cell_text(m, d, "rgd")));
    }
    if report.has_cheating() {
        let _ = writeln!(
            out,
            "<h2>{}</h2><p>{}</p>",
            super::report::CHEATING_HEADING,
            esc(super::report::CHEATING_NOTE)
        );
        out.push_str(&table(report, &report.methods.iter().collect::<Vec<_>>(), |m, d| {
            report.cheating_text(m, d)
        }));
    }
    if report.has_plus() {
        let _ = writeln!(
            out,
            "<h2>{}</h2><p>{}</p>",
            super::report::PLUS_HEADING,
            esc(super::report::PLUS_NOTE)
        );
        out.push_str(&table(report, &report.methods.iter().collect::<Vec<_>>(), |m, d| {
            report.plus_text(m, d)
        }));
    }
    out.push_str("<h2>pass@1 with 95% intervals</h2>\n");
    out.push_str(&chart_or_note(pass_chart(report)));
    for dataset in &report.datasets {
        let _ = writeln!(out, "<h2>pass@1 after each iteration: {}</h2>", esc(dataset));
        out.push_str(&chart_or_note(iterations_chart(report, dataset)));
    }
    for dataset in &report.datasets {
        let _ = writeln!(out, "<h2>Tokens per solved task, per agent: {}</h2>", esc(dataset));
        out.push_str(&chart_or_note(tokens_chart(report, dataset)));
    }
    for dataset in &report.datasets {
        let _ = writeln!(
            out,
            "<h2>Flips: {}</h2><p class=\"note\">Each cell: tasks the row's method solved and the column's did not.</p>",
            esc(dataset)
        );
        out.push_str(&flip_table(report, dataset));
    }
    out.push_str("<h2>Runs</h2>\n");
    out.push_str(&manifests(report));
    out.push_str("</body></html>\n");
    out
}

fn chart_or_note(chart: Result<String, String>) -> String {
    match chart {
        Ok(svg) => format!("<div class=\"chart\">{svg}</div>\n"),
        Err(note) => format!("<p class=\"note\">{}</p>\n", esc(&note)),
    }
}

/// A table: a row per method of `rows`, a column per dataset, `cell` in each.
fn table(report: &Report, rows: &[&String], cell: impl Fn(&str, &str) -> String) -> String {
    let mut out = String::from("<table><tr><th>method</th>");
    for d in &report.datasets {
        let _ = write!(out, "<th>{}</th>", esc(&report.heading(d)));
    }
    out.push_str("</tr>\n");
    for m in rows {
        let _ = write!(out, "<tr><td>{}</td>", esc(m));
        for d in &report.datasets {
            let _ = write!(out, "<td>{}</td>", esc(&cell(m, d)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

fn flip_table(report: &Report, dataset: &str) -> String {
    let methods: Vec<&String> = report.methods.iter().filter(|m| report.get(m, dataset).is_some()).collect();
    let mut out = String::from("<table><tr><th>solved by ↓, not by →</th>");
    for m in &methods {
        let _ = write!(out, "<th>{}</th>", esc(m));
    }
    out.push_str("</tr>\n");
    for a in &methods {
        let _ = write!(out, "<tr><td>{}</td>", esc(a));
        for b in &methods {
            let cell = if a == b {
                "·".to_string()
            } else {
                report.flips(a, b, dataset).map_or("-".into(), |n| n.to_string())
            };
            let _ = write!(out, "<td>{cell}</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

fn manifests(report: &Report) -> String {
    let mut out = String::from(
        "<table><tr><th>run</th><th>method</th><th>dataset</th><th>model</th><th>endpoint</th><th>dataset sha256</th><th>split seed</th><th>seeds</th><th>prompts (sha256)</th><th>rgd</th></tr>\n",
    );
    for e in report.cells.values() {
        let m = &e.run.manifest;
        let seeds: Vec<String> = m
            .agents
            .iter()
            .map(|(a, p)| format!("{a}={}", p.seed.map_or("-".to_string(), |s| s.to_string())))
            .collect();
        // The prompts of the run's own strategy (its directory under assets/prompts).
        let dir = format!("{}/", m.strategy.replace('-', "_"));
        let prompts: Vec<String> = m
            .prompts
            .iter()
            .filter(|(name, _)| name.starts_with(&dir))
            .map(|(name, hash)| format!("{name} {}", hash.get(..10).unwrap_or(hash)))
            .collect();
        let endpoint: String = m.endpoint.chars().take(48).collect();
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td class=\"note\">{}</td><td>{}</td></tr>",
            esc(&m.run_id),
            esc(&m.method()),
            esc(&m.dataset.name),
            esc(&m.model_shown()),
            esc(&endpoint),
            esc(m.dataset.sha256.get(..16).unwrap_or(&m.dataset.sha256)),
            m.dataset.split_seed.map_or("-".into(), |s| s.to_string()),
            esc(&seeds.join(" ")),
            esc(&prompts.join(", ")),
            esc(&m.rgd_version)
        );
    }
    out.push_str("</table>\n");
    out
}

/// An axis label only at whole numbers (a category's centre, an iteration), blank between them.
fn at_whole(x: f64, label: impl Fn(usize) -> Option<String>) -> String {
    let i = x.round();
    if (x - i).abs() < 1e-6 && i >= 0.0 {
        label(i as usize).unwrap_or_default()
    } else {
        String::new()
    }
}

type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Every chart's legend box, then the drawing finished.
fn legend_and_present<'a, 'b: 'a>(chart: &mut Chart<'a, 'b>, root: &DrawingArea<SVGBackend<'b>, Shift>) -> Result<(), String> {
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(svg_error)?;
    root.present().map_err(svg_error)
}

fn svg_error(e: impl std::fmt::Display) -> String {
    format!("the chart could not be drawn: {e}")
}

/// pass@1 of every method on every dataset, bars grouped by method, with Wilson intervals.
fn pass_chart(report: &Report) -> Result<String, String> {
    let methods = &report.methods;
    if methods.is_empty() {
        return Err("no runs".into());
    }
    let n = methods.len();
    let groups = report.datasets.len().max(1);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (960, 420)).into_drawing_area();
        root.fill(&WHITE).map_err(svg_error)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(70)
            .y_label_area_size(50)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0f64..100f64)
            .map_err(svg_error)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n)
            .x_label_formatter(&|x| at_whole(*x, |i| methods.get(i).cloned()))
            .y_desc("pass@1 (%)")
            .draw()
            .map_err(svg_error)?;
        let width = 0.8 / groups as f64;
        for (j, dataset) in report.datasets.iter().enumerate() {
            let color = Palette99::pick(j).to_rgba();
            let bars: Vec<(f64, f64, (f64, f64))> = methods
                .iter()
                .enumerate()
                .filter_map(|(i, m)| {
                    let e = report.get(m, dataset)?;
                    let x0 = i as f64 - 0.4 + j as f64 * width;
                    Some((x0, 100.0 * e.pass_at_1, (100.0 * e.interval.0, 100.0 * e.interval.1)))
                })
                .collect();
            chart
                .draw_series(
                    bars.iter()
                        .map(|(x0, v, _)| Rectangle::new([(*x0, 0.0), (x0 + width * 0.9, *v)], color.filled())),
                )
                .map_err(svg_error)?
                .label(dataset.clone())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
            chart
                .draw_series(
                    bars.iter()
                        .map(|(x0, v, (lo, hi))| ErrorBar::new_vertical(x0 + width * 0.45, *lo, *v, *hi, BLACK.stroke_width(1), 6)),
                )
                .map_err(svg_error)?;
        }
        legend_and_present(&mut chart, &root)?;
    }
    Ok(svg)
}

/// pass@1 once iterations 1..k had run, a line per iterative method.
fn iterations_chart(report: &Report, dataset: &str) -> Result<String, String> {
    let lines: Vec<(&String, Vec<f64>)> = report
        .methods
        .iter()
        .filter_map(|m| {
            let e = report.get(m, dataset)?;
            let by_iteration = &e.summary.pass_at_1_by_iteration;
            (by_iteration.len() > 1).then(|| (m, by_iteration.values().map(|p| 100.0 * p).collect()))
        })
        .collect();
    let Some(k) = lines.iter().map(|(_, v)| v.len()).max() else {
        return Err("no method here repairs over iterations".into());
    };
    let top = lines.iter().flat_map(|(_, v)| v.iter().copied()).fold(10.0f64, f64::max).min(100.0);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (960, 360)).into_drawing_area();
        root.fill(&WHITE).map_err(svg_error)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(1f64..(k as f64).max(2.0), 0f64..top * 1.1)
            .map_err(svg_error)?;
        chart
            .configure_mesh()
            .x_desc("iteration")
            .y_desc("pass@1 (%)")
            .x_labels(k.max(2))
            .x_label_formatter(&|x| at_whole(*x, |i| Some(i.to_string())))
            .draw()
            .map_err(svg_error)?;
        for (i, (m, values)) in lines.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(
                    values.iter().enumerate().map(|(j, v)| ((j + 1) as f64, *v)),
                    color.stroke_width(2),
                ))
                .map_err(svg_error)?
                .label(m.to_string())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
        }
        legend_and_present(&mut chart, &root)?;
    }
    Ok(svg)
}

/// Tokens (in + out) per solved task, stacked by agent, per method.
fn tokens_chart(report: &Report, dataset: &str) -> Result<String, String> {
    let bars: Vec<(&String, Vec<f64>)> = report
        .methods
        .iter()
        .filter_map(|m| {
            let e = report.get(m, dataset)?;
            (e.solved > 0).then(|| {
                let per_agent = Agent::ALL
                    .iter()
                    .map(|a| e.summary.tokens.get(a).map_or(0, |t| t.input + t.output) as f64 / e.solved as f64)
                    .collect();
                (m, per_agent)
            })
        })
        .collect();
    if bars.is_empty() {
        return Err("no method solved a task here, so there is no cost per solved task".into());
    }
    let n = bars.len();
    let top = bars.iter().map(|(_, v)| v.iter().sum::<f64>()).fold(1.0f64, f64::max);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (960, 360)).into_drawing_area();
        root.fill(&WHITE).map_err(svg_error)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(60)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0f64..top * 1.1)
            .map_err(svg_error)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n)
            .x_label_formatter(&|x| at_whole(*x, |i| bars.get(i).map(|(m, _)| m.to_string())))
            .y_desc("tokens per solved task")
            .draw()
            .map_err(svg_error)?;
        for (a, agent) in Agent::ALL.iter().enumerate() {
            let color = Palette99::pick(a + 3).to_rgba();
            chart
                .draw_series(bars.iter().enumerate().map(|(i, (_, v))| {
                    let below: f64 = v[..a].iter().sum();
                    Rectangle::new([(i as f64 - 0.35, below), (i as f64 + 0.35, below + v[a])], color.filled())
                }))
                .map_err(svg_error)?
                .label(agent.name())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
        }
        legend_and_present(&mut chart, &root)?;
    }
    Ok(svg)
}
