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

pub fn subject(app_name: &str, w: &Summary<'_>) -> String {
    let all = w.completed + w.open;
    if all == 0 {
        format!("Your week in {app_name}")
    } else {
        format!(
            "Your week in {app_name}: {} of {all} goals done",
            w.completed
        )
    }
}

fn goals_line(w: &Summary<'_>) -> String {
    match (w.completed, w.open) {
        (0, 0) => "You set no new weekly goals this week.".to_owned(),
        (c, 0) => format!("You completed all {c} of this week's goals. Well done!"),
        (c, o) => format!("This week you completed {c} goals; {o} are still open."),
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
