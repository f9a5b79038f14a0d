//! Gateway and REST payloads as Discord sends them (API v10), checked
//! against twilight-model's types in the tests below.

use serde_json::{Value, json};

/// The fake application's id (and its bot user's).
pub const APPLICATION_ID: u64 = 1_100_000_000_000_000_001;

pub fn hello(heartbeat_interval_ms: u64) -> Value {
    json!({"op": 10, "s": null, "t": null, "d": {"heartbeat_interval": heartbeat_interval_ms}})
}

pub fn heartbeat_ack() -> Value {
    json!({"op": 11, "s": null, "t": null, "d": null})
}

pub fn dispatch(seq: u64, t: &str, d: Value) -> Value {
    json!({"op": 0, "s": seq, "t": t, "d": d})
}

pub fn user(id: u64, name: &str, bot: bool) -> Value {
    json!({
        "id": id.to_string(),
        "username": name,
        "discriminator": "0",
        "global_name": name,
        "avatar": null,
        "bot": bot,
        "public_flags": 0,
    })
}

pub fn ready(session: &str, resume_url: &str, shard: [u32; 2], guilds: &[u64]) -> Value {
    let mut me = user(APPLICATION_ID, "quotebot", true);
    me["mfa_enabled"] = json!(true);
    me["verified"] = json!(true);
    me["flags"] = json!(0);
    json!({
        "v": 10,
        "user": me,
        "guilds": guilds.iter().map(|g| json!({"id": g.to_string(), "unavailable": true})).collect::<Vec<_>>(),
        "session_id": session,
        "resume_gateway_url": resume_url,
        "shard": shard,
        "application": {"id": APPLICATION_ID.to_string(), "flags": 565_248},
    })
}

/// A full `GUILD_CREATE` guild, as the GUILDS intent delivers it.
pub fn guild(id: u64, owner: u64) -> Value {
    json!({
        "id": id.to_string(),
        "name": format!("Guild {id}"),
        "icon": null,
        "splash": null,
        "discovery_splash": null,
        "banner": null,
        "description": null,
        "owner_id": owner.to_string(),
        "afk_channel_id": null,
        "afk_timeout": 300,
        "application_id": null,
        "default_message_notifications": 0,
        "explicit_content_filter": 0,
        "features": [],
        "emojis": [],
        "stickers": [],
        "roles": [{
            "id": id.to_string(),
            "name": "@everyone",
            "color": 0,
            "colors": {"primary_color": 0, "secondary_color": null, "tertiary_color": null},
            "hoist": false,
            "icon": null,
            "unicode_emoji": null,
            "position": 0,
            "permissions": "1071698660929",
            "managed": false,
            "mentionable": false,
            "flags": 0,
        }],
        "mfa_level": 0,
        "nsfw_level": 0,
        "preferred_locale": "en-US",
        "premium_progress_bar_enabled": false,
        "premium_tier": 0,
        "public_updates_channel_id": null,
        "rules_channel_id": null,
        "system_channel_flags": 0,
        "system_channel_id": null,
        "vanity_url_code": null,
        "verification_level": 1,
        "joined_at": "2026-01-01T00:00:00.000000+00:00",
        "large": false,
        "member_count": 2,
        "unavailable": false,
        "channels": [],
        "threads": [],
        "members": [],
        "voice_states": [],
        "presences": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
    })
}

/// `GUILD_DELETE` when the bot was removed (no `unavailable`).
pub fn guild_removed(id: u64) -> Value {
    json!({"id": id.to_string()})
}

/// Where an interaction comes from.
#[derive(Debug, Clone)]
pub struct Invoker {
    pub user: u64,
    pub guild: Option<u64>,
    pub channel: u64,
    /// The member's permissions in the channel (Discord's bit set).
    pub permissions: u64,
}

/// An `INTERACTION_CREATE` for a slash command; `options` as Discord
/// sends them (`[{"name", "type", "value"}]`, or a sub-command with its
/// own `options`).
pub fn command(id: u64, token: &str, who: &Invoker, name: &str, options: Value) -> Value {
    let mut i = json!({
        "id": id.to_string(),
        "application_id": APPLICATION_ID.to_string(),
        "type": 2,
        "data": {"id": "1200000000000000001", "name": name, "type": 1, "options": options},
        "channel_id": who.channel.to_string(),
        "channel": {"id": who.channel.to_string(), "type": 0},
        "token": token,
        "version": 1,
        "locale": "en-US",
        "app_permissions": "1071698660929",
        "entitlements": [],
        "authorizing_integration_owners": {"0": "0"},
        "context": 0,
    });
    match who.guild {
        Some(g) => {
            i["guild_id"] = json!(g.to_string());
            i["guild_locale"] = json!("en-US");
            i["member"] = json!({
                "user": user(who.user, "member", false),
                "roles": [],
                "joined_at": "2026-01-01T00:00:00.000000+00:00",
                "deaf": false,
                "mute": false,
                "flags": 0,
                "permissions": who.permissions.to_string(),
            });
        }
        None => {
            i["user"] = user(who.user, "someone", false);
            i["context"] = json!(1);
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use twilight_model::application::interaction::Interaction;
    use twilight_model::gateway::payload::incoming::{GuildCreate, GuildDelete, Ready};

    fn parse<T: serde::de::DeserializeOwned>(v: Value) -> T {
        serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_payloads_are_what_twilight_reads_from_discord() {
        let r: Ready = parse(ready("s", "ws://127.0.0.1:1", [0, 2], &[1, 2]));
        assert_eq!(r.guilds.len(), 2);
        let full: twilight_model::guild::Guild = parse(guild(42, 7));
        assert_eq!(full.id.get(), 42);
        let g: GuildCreate = parse(guild(42, 7));
        assert_eq!(g.id().get(), 42);
        assert!(matches!(g, GuildCreate::Available(_)));
        let d: GuildDelete = parse(guild_removed(42));
        assert_eq!(d.unavailable, None);
        let who = Invoker {
            user: 5,
            guild: Some(42),
            channel: 9,
            permissions: 1 << 5,
        };
        let opts = json!([{"name": "show", "type": 1, "options": []}]);
        let i: Interaction = parse(command(77, "tok", &who, "setup", opts));
        assert_eq!(i.guild_id.map(|g| g.get()), Some(42));
        assert!(i.member.and_then(|m| m.permissions).is_some());
        let dm = Invoker { guild: None, ..who };
        let i: Interaction = parse(command(78, "tok", &dm, "quote", json!([])));
        assert_eq!(i.user.map(|u| u.id.get()), Some(5));
    }
}
