//! A drawn screen as an SVG picture. The pictures of the TUI in docs/ are drawn by the real views
//! into a test backend and written through this (`tests/all/pictures.rs`), so they show what the views
//! draw today and a test fails when they no longer do.

use std::fmt::Write;

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

/// One cell's size in pixels, for a 14 px monospace font.
const CELL_W: f32 = 8.4;
const CELL_H: f32 = 18.0;
const FONT: &str = "'DejaVu Sans Mono', 'Menlo', 'Consolas', monospace";
const DEFAULT_FG: &str = "#d4d4d4";
const DEFAULT_BG: &str = "#1e1e1e";

/// How one cell looks, for grouping neighbours that look the same into one SVG element.
#[derive(Clone, PartialEq)]
struct Look {
    fg: String,
    bg: String,
    bold: bool,
    italic: bool,
    dim: bool,
    underline: bool,
}

fn look(cell: &ratatui::buffer::Cell) -> Look {
    let m = cell.modifier;
    let (mut fg, mut bg) = (hex(cell.fg, DEFAULT_FG), hex(cell.bg, DEFAULT_BG));
    if m.contains(Modifier::REVERSED) {
        std::mem::swap(&mut fg, &mut bg);
    }
    Look {
        fg,
        bg,
        bold: m.contains(Modifier::BOLD),
        italic: m.contains(Modifier::ITALIC),
        dim: m.contains(Modifier::DIM),
        underline: m.contains(Modifier::UNDERLINED),
    }
}

/// The screen as a standalone SVG document; `title` is its accessible name.
pub fn svg(buffer: &Buffer, title: &str) -> String {
    let area = buffer.area;
    let (width, height) = (f32::from(area.width) * CELL_W, f32::from(area.height) * CELL_H);
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.1} {height:.1}" role="img" aria-label="{}">"#,
        escape(title)
    );
    let _ = writeln!(out, r#"<title>{}</title>"#, escape(title));
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="{DEFAULT_BG}"/>"#);
    let _ = writeln!(out, r#"<g font-family="{FONT}" font-size="14" xml:space="preserve">"#);
    for y in 0..area.height {
        let row: Vec<&ratatui::buffer::Cell> = (0..area.width).map(|x| &buffer[(area.x + x, area.y + y)]).collect();
        // Backgrounds first, as runs of one colour, then the text over them.
        for (start, len, look) in runs(&row, |c| look(c).bg) {
            if look.bg != DEFAULT_BG {
                let _ = writeln!(
                    out,
                    r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{CELL_H:.1}" fill="{}"/>"#,
                    start as f32 * CELL_W,
                    f32::from(y) * CELL_H,
                    len as f32 * CELL_W,
                    look.bg
                );
            }
        }
        for (start, len, look) in runs(&row, look) {
            for (first, cells) in words(&row[start..start + len]) {
                write_text(&mut out, start + first, y, cells, &look);
            }
        }
    }
    out.push_str("</g>\n</svg>\n");
    out
}

/// The stretches of a run worth a text element: runs of two or more blanks split it, so no
/// viewer's whitespace handling can move a character from its cell.
fn words<'a>(cells: &'a [&'a ratatui::buffer::Cell]) -> Vec<(usize, &'a [&'a ratatui::buffer::Cell])> {
    let blank = |i: usize| cells.get(i).is_none_or(|c| c.symbol() == " ");
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for i in 0..=cells.len() {
        let ends = i == cells.len() || (blank(i) && (blank(i + 1) || i + 1 == cells.len()));
        match (start, ends) {
            (None, false) if !blank(i) => start = Some(i),
            (Some(s), true) => {
                out.push((s, &cells[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    out
}

fn write_text(out: &mut String, x: usize, y: u16, cells: &[&ratatui::buffer::Cell], look: &Look) {
    let mut attrs = format!(r#" fill="{}""#, look.fg);
    if look.bold {
        attrs.push_str(r#" font-weight="bold""#);
    }
    if look.italic {
        attrs.push_str(r#" font-style="italic""#);
    }
    if look.dim {
        attrs.push_str(r#" opacity="0.6""#);
    }
    if look.underline {
        attrs.push_str(r#" text-decoration="underline""#);
    }
    // Every character gets the x of its own cell: columns and box-drawing lines stay aligned
    // whatever font the viewer substitutes (a font's own advance would drift them).
    let (mut xs, mut text) = (Vec::new(), String::new());
    for (i, cell) in cells.iter().enumerate() {
        for c in cell.symbol().chars() {
            xs.push(format!("{:.1}", (x + i) as f32 * CELL_W));
            text.push(c);
        }
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{:.1}"{attrs}>{}</text>"#,
        xs.join(" "),
        f32::from(y) * CELL_H + 13.5,
        escape(&text)
    );
}

/// Maximal runs of neighbouring cells whose `key` is equal: (first cell, cell count, look of the
/// first). A wide character's second cell (an empty symbol) stays in its run.
fn runs<K: PartialEq>(row: &[&ratatui::buffer::Cell], key: impl Fn(&ratatui::buffer::Cell) -> K) -> Vec<(usize, usize, Look)> {
    let mut out: Vec<(usize, usize, Look)> = Vec::new();
    let mut last: Option<K> = None;
    for (x, cell) in row.iter().enumerate() {
        let k = key(cell);
        match (&last, out.last_mut()) {
            (Some(prev), Some(run)) if *prev == k || cell.symbol().is_empty() => run.1 += 1,
            _ => {
                out.push((x, 1, look(cell)));
                last = Some(k);
            }
        }
    }
    out
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A terminal colour as the hex a dark terminal theme shows it in.
fn hex(color: Color, default: &str) -> String {
    const NAMED: [&str; 16] = [
        "#000000", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5", "#666666", "#f14c4c", "#23d18b", "#f5f543",
        "#3b8eea", "#d670d6", "#29b8db", "#ffffff",
    ];
    let index = match color {
        Color::Reset => return default.to_string(),
        Color::Rgb(r, g, b) => return format!("#{r:02x}{g:02x}{b:02x}"),
        Color::Black => 0,
        Color::Red => 1,
        Color::Green => 2,
        Color::Yellow => 3,
        Color::Blue => 4,
        Color::Magenta => 5,
        Color::Cyan => 6,
        Color::Gray => 7,
        Color::DarkGray => 8,
        Color::LightRed => 9,
        Color::LightGreen => 10,
        Color::LightYellow => 11,
        Color::LightBlue => 12,
        Color::LightMagenta => 13,
        Color::LightCyan => 14,
        Color::White => 15,
        Color::Indexed(i) => i,
    };
    match index {
        0..=15 => NAMED[usize::from(index)].to_string(),
        // The 6x6x6 cube, then 24 greys.
        16..=231 => {
            let i = index - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + v * 40 };
            format!("#{:02x}{:02x}{:02x}", level(i / 36), level(i / 6 % 6), level(i % 6))
        }
        _ => {
            let v = 8 + (index - 232) * 10;
            format!("#{v:02x}{v:02x}{v:02x}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;
    use ratatui::style::Style;

    #[test]
    fn cells_become_escaped_runs_with_their_colours() {
        let mut buffer = Buffer::empty(Rect::new(0, 0, 12, 2));
        buffer.set_string(0, 0, "a<b", Style::default().fg(Color::Red));
        buffer.set_string(3, 0, "ok", Style::default().add_modifier(Modifier::REVERSED));
        buffer.set_string(0, 1, "界x", Style::default().fg(Color::Indexed(196)).add_modifier(Modifier::BOLD));
        let svg = svg(&buffer, "a \"test\"");
        assert!(svg.contains(r#"aria-label="a &quot;test&quot;""#), "{svg}");
        assert!(
            svg.contains(r##"<text x="0.0 8.4 16.8" y="13.5" fill="#cd3131">a&lt;b</text>"##),
            "{svg}"
        );
        // Reversed: the default colours swapped, the background drawn as a rect.
        assert!(svg.contains(r##"width="16.8" height="18.0" fill="#d4d4d4""##), "{svg}");
        assert!(svg.contains(r##"fill="#1e1e1e">ok</text>"##), "{svg}");
        // A wide character takes two cells: the next character starts after both.
        assert!(
            svg.contains(r##"<text x="0.0" y="31.5" fill="#ff0000" font-weight="bold">界</text>"##),
            "{svg}"
        );
        assert!(
            svg.contains(r##"<text x="16.8" y="31.5" fill="#ff0000" font-weight="bold">x</text>"##),
            "{svg}"
        );
    }
}
