//! A bordered table that renders only the rows in its window (`offset..offset + height`), so a
//! 10,000-row list costs the same per frame as a 40-row one. Shows an empty-state message when
//! there are no rows.
//!
//! Columns of a fixed width (`Constraint::Length`) keep it; the others (`Fill(weight)`) are
//! sized to their content, the widest of the title and the cells in the window, and share by
//! weight what room there is when the content does not fit. Room left over stays at the right,
//! so a 20-character name takes 20 columns on a wide terminal, not half of it.

use ratatui::{
    buffer::Buffer,
    layout::{Constraint, Rect},
    style::Style,
    text::{Line, Span, Text},
    widgets::{Block, Paragraph, Row, StatefulWidget, Table, TableState, Widget, Wrap},
};

use crate::config::{Role, Theme};

/// One cell of a row: what ratatui's `Cell` holds, kept where the table can measure it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cell<'a> {
    content: Text<'a>,
    style: Style,
}

impl<'a, T: Into<Text<'a>>> From<T> for Cell<'a> {
    fn from(content: T) -> Cell<'a> {
        Cell {
            content: content.into(),
            style: Style::default(),
        }
    }
}

impl<'a> Cell<'a> {
    pub fn style(mut self, style: impl Into<Style>) -> Cell<'a> {
        self.style = style.into();
        self
    }

    fn width(&self) -> u16 {
        u16::try_from(self.content.width()).unwrap_or(u16::MAX)
    }
}

impl<'a> From<Cell<'a>> for ratatui::widgets::Cell<'a> {
    fn from(cell: Cell<'a>) -> Self {
        ratatui::widgets::Cell::from(cell.content).style(cell.style)
    }
}

/// One column: its title, its width, and when it is dropped on a narrow terminal (0 = never;
/// higher numbers go first).
pub struct Column {
    pub title: &'static str,
    pub width: Constraint,
    pub drop: u8,
}

impl Column {
    pub fn new(title: &'static str, width: Constraint, drop: u8) -> Column {
        Column { title, width, drop }
    }
}

/// A list's title with its `/` filter after the count: ` BroadcastJobs [2] /web `.
pub fn filtered_title(theme: &Theme, title: String, filter: &str) -> Line<'static> {
    let mut spans = vec![Span::raw(title)];
    if !filter.is_empty() {
        spans.push(Span::styled(
            format!("/{filter} "),
            theme.style(Role::Prompt),
        ));
    }
    Line::from(spans)
}

/// What an empty list says: `empty`, or with a filter typed, that nothing matches it.
pub fn unmatched(empty: Line<'static>, filter: &str) -> Line<'static> {
    if filter.is_empty() {
        empty
    } else {
        Line::from(format!("Nothing matches /{filter} (esc clears the filter)"))
    }
}

const SPACING: u16 = 1;
/// The least a content-sized column (the name) keeps before other columns are dropped, unless
/// its content is narrower.
const FILL_MIN: u16 = 16;

/// Which columns fit in `width` (inside the borders), dropping by priority; `content` is each
/// column's content width (title and cells).
fn fitting(columns: &[Column], content: &[u16], width: u16) -> Vec<bool> {
    let mut keep = vec![true; columns.len()];
    loop {
        let need: u16 = columns
            .iter()
            .zip(content)
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|((c, content), _)| match c.width {
                Constraint::Length(n) | Constraint::Min(n) => n + SPACING,
                _ => (*content).min(FILL_MIN) + SPACING,
            })
            .sum();
        if need <= width + SPACING {
            return keep;
        }
        let victim = columns
            .iter()
            .enumerate()
            .filter(|(i, c)| keep[*i] && c.drop > 0)
            .max_by_key(|(i, c)| (c.drop, *i))
            .map(|(i, _)| i);
        match victim {
            Some(i) => keep[i] = false,
            None => return keep,
        }
    }
}

/// The widths of the kept `columns` in `width`: fixed ones as given, the others their
/// `content` width, or when those do not all fit, a share of the room by weight (a column whose
/// content is narrower than its share takes only its content, and the rest share what it left).
fn widths(columns: &[&Column], content: &[u16], width: u16) -> Vec<u16> {
    let gaps = SPACING.saturating_mul(columns.len().saturating_sub(1) as u16);
    let mut out: Vec<u16> = columns
        .iter()
        .map(|c| match c.width {
            Constraint::Length(n) => n,
            _ => 0,
        })
        .collect();
    let fixed: u16 = out.iter().fold(0, |a, w| a.saturating_add(*w));
    let mut room = width.saturating_sub(fixed).saturating_sub(gaps);
    let weight = |c: &Column| match c.width {
        Constraint::Fill(w) => u32::from(w.max(1)),
        _ => 1,
    };
    let mut open: Vec<usize> = (0..columns.len())
        .filter(|&i| !matches!(columns[i].width, Constraint::Length(_)))
        .collect();
    // Content-sized where it fits within the column's share; the rest share what is left.
    loop {
        let total: u32 = open.iter().map(|&i| weight(columns[i])).sum();
        let share = |i: usize| u32::from(room) * weight(columns[i]) / total.max(1);
        let fits: Vec<usize> = open
            .iter()
            .copied()
            .filter(|&i| u32::from(content[i]) <= share(i))
            .collect();
        if fits.is_empty() {
            break;
        }
        for i in fits {
            out[i] = content[i];
            room = room.saturating_sub(content[i]);
        }
        open.retain(|&i| out[i] == 0 && content[i] != 0);
        if open.is_empty() {
            return out;
        }
    }
    let total: u32 = open.iter().map(|&i| weight(columns[i])).sum();
    let mut left = room;
    for (n, &i) in open.iter().enumerate() {
        let share = if n + 1 == open.len() {
            left
        } else {
            // Rounded to the nearest, as ratatui's layout rounds its shares.
            ((u32::from(room) * weight(columns[i]) + total / 2) / total.max(1)) as u16
        };
        out[i] = share.min(left);
        left -= out[i];
    }
    out
}

/// What a view hands to [`render`].
pub struct TableSpec<'a> {
    pub title: Line<'a>,
    pub title_right: Line<'a>,
    pub columns: Vec<Column>,
    /// Total rows in the list (for the window maths).
    pub len: usize,
    pub selected: usize,
    pub offset: usize,
    /// Shown instead of rows when `len == 0`.
    pub empty: Vec<Line<'a>>,
}

/// Draws the table; `cells(i)` builds the cells of row `i`, one per column (called only for
/// rows in the window).
pub fn render<'a>(
    spec: TableSpec<'a>,
    theme: &Theme,
    area: Rect,
    buf: &mut Buffer,
    cells: impl Fn(usize) -> Vec<Cell<'a>>,
) {
    let block = Block::bordered()
        .border_style(theme.style(Role::Border))
        .title(spec.title.style(theme.style(Role::Title)))
        .title(
            spec.title_right
                .right_aligned()
                .style(theme.style(Role::Muted)),
        );
    if spec.len == 0 {
        let inner = block.inner(area);
        block.render(area, buf);
        Paragraph::new(spec.empty)
            .style(theme.style(Role::Muted))
            .wrap(Wrap { trim: true })
            .centered()
            .render(inner.inner(ratatui::layout::Margin::new(1, 1)), buf);
        return;
    }
    // Inner height minus the column header.
    let height = area.height.saturating_sub(3) as usize;
    let height = height.max(1);
    // The same window rule as the app's cursor maths, applied again in case the size changed.
    let selected = spec.selected.min(spec.len - 1);
    let mut offset = spec.offset.min(spec.len - 1);
    if selected < offset {
        offset = selected;
    } else if selected >= offset + height {
        offset = selected + 1 - height;
    }
    let end = (offset + height).min(spec.len);
    let window: Vec<Vec<Cell<'a>>> = (offset..end).map(&cells).collect();
    let mut content: Vec<u16> = spec
        .columns
        .iter()
        .map(|c| Span::raw(c.title).width() as u16)
        .collect();
    for row in &window {
        for (w, cell) in content.iter_mut().zip(row) {
            *w = (*w).max(cell.width());
        }
    }
    let inner_width = area.width.saturating_sub(2);
    let keep = fitting(&spec.columns, &content, inner_width);
    let rows: Vec<Row<'a>> = window
        .into_iter()
        .map(|row| {
            Row::new(
                row.into_iter()
                    .zip(&keep)
                    .filter(|(_, k)| **k)
                    .map(|(c, _)| ratatui::widgets::Cell::from(c)),
            )
        })
        .collect();
    let kept: Vec<&Column> = spec
        .columns
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(c, _)| c)
        .collect();
    let kept_content: Vec<u16> = content
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(w, _)| *w)
        .collect();
    let widths = widths(&kept, &kept_content, inner_width);
    let header = Row::new(kept.iter().map(|c| c.title)).style(theme.style(Role::TableHeader));
    let table = Table::new(rows, widths.into_iter().map(Constraint::Length))
        .header(header)
        .block(block)
        .style(theme.style(Role::Text))
        .column_spacing(SPACING)
        .row_highlight_style(theme.style(Role::RowSelected));
    let mut state = TableState::default().with_selected(Some(selected - offset));
    StatefulWidget::render(table, area, buf, &mut state);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_highest_priority_columns_first() {
        let cols = vec![
            Column::new("NAME", Constraint::Fill(1), 0),
            Column::new("A", Constraint::Length(10), 1),
            Column::new("B", Constraint::Length(10), 2),
        ];
        let long = [30, 1, 1];
        assert_eq!(fitting(&cols, &long, 60), vec![true, true, true]);
        assert_eq!(fitting(&cols, &long, 30), vec![true, true, false]);
        assert_eq!(fitting(&cols, &long, 20), vec![true, false, false]);
        assert_eq!(fitting(&cols, &long, 5), vec![true, false, false]);
        // A short name needs less than FILL_MIN: more columns stay.
        assert_eq!(fitting(&cols, &[6, 1, 1], 28), vec![true, true, true]);
    }

    #[test]
    fn content_sized_columns_take_their_content_and_share_when_it_does_not_fit() {
        let cols = [
            Column::new("NAME", Constraint::Fill(1), 0),
            Column::new("READY", Constraint::Length(5), 0),
            Column::new("IMAGE", Constraint::Fill(2), 0),
        ];
        let cols: Vec<&Column> = cols.iter().collect();
        // Wide: each takes its content; the rest of the 178 stays free at the right.
        assert_eq!(widths(&cols, &[20, 5, 30], 178), vec![20, 5, 30]);
        // Narrow: 40 - 5 - 2 gaps = 33 to share; the name fits its share (11), the image
        // takes the rest.
        assert_eq!(widths(&cols, &[8, 5, 60], 40), vec![8, 5, 25]);
        // Neither fits: shared 1:2.
        assert_eq!(widths(&cols, &[50, 5, 60], 40), vec![11, 5, 22]);
        // Too narrow for the fixed columns: nothing below zero.
        assert_eq!(widths(&cols, &[50, 5, 60], 4), vec![0, 5, 0]);
    }

    /// The issue: on a 180-column terminal a 20-character name took ~90 columns.
    #[test]
    fn a_name_column_is_as_wide_as_its_names() {
        use ratatui::{buffer::Buffer, layout::Rect};
        let theme = Theme::builtin("default-dark").expect("a shipped theme");
        let area = Rect::new(0, 0, 180, 6);
        let mut buf = Buffer::empty(area);
        let spec = TableSpec {
            title: Line::from(" Workloads "),
            title_right: Line::default(),
            columns: vec![
                Column::new("NAME", Constraint::Fill(1), 0),
                Column::new("READY", Constraint::Length(5), 0),
                Column::new("AGE", Constraint::Length(4), 0),
            ],
            len: 2,
            selected: 0,
            offset: 0,
            empty: Vec::new(),
        };
        let names = ["checkout-frontend-v2", "cart"];
        render(spec, &theme, area, &mut buf, |i| {
            vec![Cell::from(names[i]), Cell::from("3/3"), Cell::from("5m")]
        });
        let line = |y: u16| {
            (0..area.width)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
        };
        // Inside the border: NAME is the 20 characters of the longest name, then a space.
        let header = line(1);
        let inside = header.trim_start_matches('│');
        assert_eq!(inside.find("READY"), Some(20 + 1), "{header}");
        assert!(
            line(2).starts_with("│checkout-frontend-v2 3/3   5m "),
            "{}",
            line(2)
        );
    }
}
