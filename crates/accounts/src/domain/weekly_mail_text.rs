//! The words of the weekly goals mail: a plain text part and an HTML part
//! saying the same.

use keel_platform::http::escape_html;

use crate::entity::{user, yearly_goal};

/// One user's week.
pub struct Summary<'a> {
    pub completed: usize,
    pub open: usize,
    pub due_soon: Vec<&'a yearly_goal::Model>,
}

/// The app the mail speaks for.
pub struct App<'a> {
    pub name: &'a str,
    pub url: Option<&'a str>,
}

/// `n` and the noun, singular for one.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

pub fn subject(app_name: &str, w: &Summary<'_>) -> String {
    let all = w.completed + w.open;
    if all == 0 {
        format!("Your week in {app_name}")
    } else {
        format!(
            "Your week in {app_name}: {} of {} done",
            w.completed,
            count(all, "goal", "goals")
        )
    }
}

fn goals_line(w: &Summary<'_>) -> String {
    match (w.completed, w.open) {
        (0, 0) => "You set no new weekly goals this week.".to_owned(),
        (1, 0) => "You completed this week's goal. Well done!".to_owned(),
        (c, 0) => format!("You completed all {c} of this week's goals. Well done!"),
        (c, o) => format!(
            "This week you completed {}; {} still open.",
            count(c, "goal", "goals"),
            if o == 1 {
                "1 is".to_owned()
            } else {
                format!("{o} are")
            }
        ),
    }
}

fn due_lines(w: &Summary<'_>) -> Vec<String> {
    w.due_soon
        .iter()
        .map(|g| format!("{} (by {})", g.title, g.complete_by.format("%B %-d, %Y")))
        .collect()
}

pub fn text(s: &App<'_>, u: &user::Model, w: &Summary<'_>, unsubscribe: &str) -> String {
    let mut out = format!("Hello {},\n\n{}\n", u.username, goals_line(w));
    let due = due_lines(w);
    if !due.is_empty() {
        out.push_str("\nYearly goals due soon:\n");
        for d in due {
            out.push_str(&format!("  - {d}\n"));
        }
    }
    if let Some(app) = s.url {
        out.push_str(&format!("\nOpen {}: {app}\n", s.name));
    }
    out.push_str(&format!(
        "\nYou get this mail because you turned on the weekly goals mail in {}.\nStop it: {unsubscribe}\n",
        s.name
    ));
    out
}

pub fn html(s: &App<'_>, u: &user::Model, w: &Summary<'_>, unsubscribe: &str) -> String {
    let mut out = format!(
        "<!doctype html><html><body style=\"font-family:sans-serif\"><p>Hello {},</p><p>{}</p>",
        escape_html(&u.username),
        escape_html(&goals_line(w))
    );
    let due = due_lines(w);
    if !due.is_empty() {
        out.push_str("<p>Yearly goals due soon:</p><ul>");
        for d in due {
            out.push_str(&format!("<li>{}</li>", escape_html(&d)));
        }
        out.push_str("</ul>");
    }
    if let Some(app) = s.url {
        out.push_str(&format!(
            "<p><a href=\"{}\">Open {}</a></p>",
            escape_html(app),
            escape_html(s.name)
        ));
    }
    out.push_str(&format!(
        "<p style=\"color:#666;font-size:small\">You get this mail because you turned on the weekly goals mail in {}. <a href=\"{}\">Unsubscribe</a></p></body></html>",
        escape_html(s.name),
        escape_html(unsubscribe)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn week(completed: usize, open: usize) -> Summary<'static> {
        Summary {
            completed,
            open,
            due_soon: Vec::new(),
        }
    }

    #[test]
    fn every_count_reads_right_in_the_singular_and_the_plural() {
        let cases = [
            (
                (0, 0),
                "Your week in App",
                "You set no new weekly goals this week.",
            ),
            (
                (0, 1),
                "Your week in App: 0 of 1 goal done",
                "This week you completed 0 goals; 1 is still open.",
            ),
            (
                (1, 0),
                "Your week in App: 1 of 1 goal done",
                "You completed this week's goal. Well done!",
            ),
            (
                (1, 1),
                "Your week in App: 1 of 2 goals done",
                "This week you completed 1 goal; 1 is still open.",
            ),
            (
                (2, 3),
                "Your week in App: 2 of 5 goals done",
                "This week you completed 2 goals; 3 are still open.",
            ),
            (
                (3, 0),
                "Your week in App: 3 of 3 goals done",
                "You completed all 3 of this week's goals. Well done!",
            ),
        ];
        for ((c, o), subj, line) in cases {
            assert_eq!(subject("App", &week(c, o)), subj);
            assert_eq!(goals_line(&week(c, o)), line);
        }
    }
}
