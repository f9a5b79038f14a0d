//! The slash commands, registered globally by shard 0 when it is ready:
//! `/setup channel|show` (Manage Server), `/quote`, `/suggest`, and
//! `/review list|approve|reject` (answered for `OWNER_ID` only).

use twilight_model::application::command::{Command, CommandType};
use twilight_model::application::interaction::InteractionContextType;
use twilight_model::channel::ChannelType;
use twilight_model::guild::Permissions;
use twilight_util::builder::command::{
    ChannelBuilder, CommandBuilder, IntegerBuilder, StringBuilder, SubCommandBuilder,
};

pub fn all() -> Vec<Command> {
    vec![
        CommandBuilder::new(
            "setup",
            "Set up the scheduled quote",
            CommandType::ChatInput,
        )
        .default_member_permissions(Permissions::MANAGE_GUILD)
        .contexts([InteractionContextType::Guild])
        .option(
            SubCommandBuilder::new(
                "channel",
                "Choose where, how often and when quotes are posted",
            )
            .option(
                ChannelBuilder::new("channel", "The channel for the quotes")
                    .channel_types([ChannelType::GuildText, ChannelType::GuildAnnouncement])
                    .required(true),
            )
            .option(
                StringBuilder::new("frequency", "How often")
                    .choices([
                        ("Daily", "Daily"),
                        ("Weekly", "Weekly"),
                        ("Monthly", "Monthly"),
                    ])
                    .required(true),
            )
            .option(StringBuilder::new("time", "Time of day, HH:MM (24 h)").required(true))
            .option(
                IntegerBuilder::new(
                    "day",
                    "Weekly: 0 Sunday … 6 Saturday; monthly: day of the month 1–31",
                )
                .min_value(0)
                .max_value(31),
            )
            .option(StringBuilder::new(
                "timezone",
                "IANA time zone, e.g. Europe/Berlin (default UTC)",
            )),
        )
        .option(SubCommandBuilder::new(
            "show",
            "Show the set-up and the next quote time",
        ))
        .build(),
        CommandBuilder::new(
            "quote",
            "A random motivational quote",
            CommandType::ChatInput,
        )
        .build(),
        CommandBuilder::new(
            "suggest",
            "Suggest a quote for the collection",
            CommandType::ChatInput,
        )
        .option(
            StringBuilder::new("quote", "The quote")
                .max_length(500)
                .required(true),
        )
        .option(
            StringBuilder::new("author", "Who said it")
                .max_length(100)
                .required(true),
        )
        .build(),
        CommandBuilder::new(
            "review",
            "Review suggested quotes (the bot's owner)",
            CommandType::ChatInput,
        )
        .option(SubCommandBuilder::new("list", "Pending suggestions"))
        .option(
            SubCommandBuilder::new("approve", "Approve a suggestion: it joins the quotes")
                .option(StringBuilder::new("id", "The suggestion's id").required(true)),
        )
        .option(
            SubCommandBuilder::new("reject", "Reject a suggestion")
                .option(StringBuilder::new("id", "The suggestion's id").required(true)),
        )
        .build(),
    ]
}
