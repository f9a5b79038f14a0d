//! Where configuration values come from: the process environment, and
//! optionally a flat `keel.toml` whose keys are the same variable names.
//! The environment wins over the file. Values are read once at start.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use super::{ConfigError, Secret};

/// The variable that points at a configuration file.
pub const CONFIG_FILE_VAR: &str = "KEEL_CONFIG_FILE";
const DEFAULT_CONFIG_FILE: &str = "keel.toml";

/// A snapshot of every configuration variable, taken once.
#[derive(Debug, Clone, Default)]
pub struct Source {
    vars: HashMap<String, String>,
}

impl Source {
    /// Reads `keel.toml` (or the file named by `KEEL_CONFIG_FILE`) if present,
    /// then overlays the process environment.
    pub fn load() -> Result<Self, ConfigError> {
        let env: HashMap<String, String> = std::env::vars().collect();
        let explicit = env.get(CONFIG_FILE_VAR).filter(|v| !v.is_empty());
        let path = explicit.map_or_else(|| PathBuf::from(DEFAULT_CONFIG_FILE), PathBuf::from);
        let mut vars = if explicit.is_some() || path.exists() {
            read_file(&path)?
        } else {
            HashMap::new()
        };
        vars.extend(env);
        with_files(vars).map(|vars| Self { vars })
    }

    /// The process environment alone, no file (for processes whose
    /// deployment reads no configuration file).
    pub fn environment() -> Result<Self, ConfigError> {
        with_files(std::env::vars().collect()).map(|vars| Self { vars })
    }

    /// A source from these pairs as the process environment would give
    /// them: each `NAME_FILE` read into `NAME`, as [`Self::load`] does.
    pub fn from_environment<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Self, ConfigError> {
        let vars = pairs.into_iter().map(|(k, v)| (k.into(), v.into()));
        with_files(vars.collect()).map(|vars| Self { vars })
    }

    /// A source holding exactly these pairs (tests, embedding).
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Self {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// Sets one value, replacing what was there.
    pub fn set(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.vars.insert(name.into(), value.into());
    }

    /// The raw value; an empty value counts as unset.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }

    /// A string value with a default.
    pub fn string_or(&self, name: &str, default: &str) -> String {
        self.get(name).unwrap_or(default).to_owned()
    }

    /// A value that must be present.
    pub fn required(&self, name: &str) -> Result<String, ConfigError> {
        self.get(name)
            .map(str::to_owned)
            .ok_or_else(|| ConfigError::missing(name))
    }

    /// A value parsed with `FromStr`; absent means `None`.
    pub fn parse<T>(&self, name: &str) -> Result<Option<T>, ConfigError>
    where
        T: FromStr,
        T::Err: std::fmt::Display,
    {
        match self.get(name) {
            None => Ok(None),
            Some(raw) => raw
                .trim()
                .parse::<T>()
                .map(Some)
                .map_err(|e| ConfigError::invalid(name, format!("{e} (got {raw:?})"))),
        }
    }

    /// A value parsed with `FromStr`, or the default when absent.
    pub fn parse_or<T>(&self, name: &str, default: T) -> Result<T, ConfigError>
    where
        T: FromStr,
        T::Err: std::fmt::Display,
    {
        Ok(self.parse(name)?.unwrap_or(default))
    }

    /// `true`/`false` (also `1`/`0`, `yes`/`no`, `on`/`off`).
    pub fn bool_or(&self, name: &str, default: bool) -> Result<bool, ConfigError> {
        match self.get(name).map(|v| v.trim().to_ascii_lowercase()) {
            None => Ok(default),
            Some(v) => match v.as_str() {
                "true" | "1" | "yes" | "on" => Ok(true),
                "false" | "0" | "no" | "off" => Ok(false),
                _ => Err(ConfigError::invalid(
                    name,
                    format!("expected true or false (got {v:?})"),
                )),
            },
        }
    }

    /// A duration given in whole seconds.
    pub fn secs_or(&self, name: &str, default: Duration) -> Result<Duration, ConfigError> {
        Ok(self
            .parse::<u64>(name)?
            .map_or(default, Duration::from_secs))
    }

    /// A duration given in milliseconds.
    pub fn millis_or(&self, name: &str, default: Duration) -> Result<Duration, ConfigError> {
        Ok(self
            .parse::<u64>(name)?
            .map_or(default, Duration::from_millis))
    }

    /// A comma-separated list; absent means empty.
    pub fn list(&self, name: &str) -> Vec<String> {
        self.get(name)
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A secret: never printed, not even in errors.
    pub fn secret(&self, name: &str) -> Option<Secret> {
        self.get(name).map(|v| Secret::new(v.to_owned()))
    }
}

/// The variables documented without keel's prefix and that may come
/// from a file too.
const UNPREFIXED: &[&str] = &[
    "DATABASE_URL",
    "REDIS_URL",
    "CHAT_APPLICATION_BOT_TOKEN",
    "OWNER_ID",
    "MAIN_CHANNEL_ID",
    "SKIP_MIGRATIONS",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
];

/// `NAME_FILE` gives `NAME` the contents of that file (a Docker or
/// Kubernetes secret mounted as a file), as the official PostgreSQL image
/// does: for every `KEEL_*` and `OTEL_*` variable and the unprefixed ones. One
/// trailing line break is dropped. Setting both is an error, and so is a
/// file that cannot be read (named; its contents never are).
fn with_files(mut vars: HashMap<String, String>) -> Result<HashMap<String, String>, ConfigError> {
    let files: Vec<(String, String)> = vars
        .iter()
        .filter(|(k, v)| !v.trim().is_empty() && k.as_str() != CONFIG_FILE_VAR)
        .filter_map(|(k, v)| Some((k.strip_suffix("_FILE")?.to_owned(), v.clone())))
        .filter(|(name, _)| {
            name.starts_with("KEEL_")
                || name.starts_with("OTEL_")
                || UNPREFIXED.contains(&name.as_str())
        })
        .collect();
    for (name, path) in files {
        let file_var = format!("{name}_FILE");
        if vars.get(&name).is_some_and(|v| !v.trim().is_empty()) {
            return Err(ConfigError::invalid(
                &file_var,
                format!("{name} is set too: set one of {name} and {file_var}"),
            ));
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| ConfigError::invalid(&file_var, format!("cannot read {path}: {e}")))?;
        let value = text
            .strip_suffix("\r\n")
            .or_else(|| text.strip_suffix('\n'))
            .unwrap_or(&text);
        vars.insert(name, value.to_owned());
    }
    Ok(vars)
}

fn read_file(path: &Path) -> Result<HashMap<String, String>, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError::invalid(CONFIG_FILE_VAR, format!("{}: {e}", path.display())))?;
    let table: toml::Table = text
        .parse()
        .map_err(|e| ConfigError::invalid(CONFIG_FILE_VAR, format!("{}: {e}", path.display())))?;
    let mut vars = HashMap::new();
    for (key, value) in table {
        let name = key.to_ascii_uppercase();
        let text = match value {
            toml::Value::String(s) => s,
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            toml::Value::Array(items) => items
                .iter()
                .map(|v| match v {
                    toml::Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(","),
            other => {
                return Err(ConfigError::invalid(
                    &name,
                    format!(
                        "{}: expected a plain value, got {}",
                        path.display(),
                        other.type_str()
                    ),
                ));
            }
        };
        vars.insert(name, text);
    }
    Ok(vars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_value_counts_as_unset() {
        let s = Source::from_pairs([("A", "  ")]);
        assert_eq!(s.get("A"), None);
    }

    #[test]
    fn a_bad_number_names_the_variable() {
        let s = Source::from_pairs([("KEEL_X", "abc")]);
        let err = s.parse::<u32>("KEEL_X").err().map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("KEEL_X")));
    }

    fn files(vars: &[(&str, &str)]) -> Result<HashMap<String, String>, ConfigError> {
        with_files(
            vars.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        )
    }

    #[test]
    fn a_secret_can_come_from_the_file_its_file_variable_names() -> Result<(), ConfigError> {
        let dir = tempfile::tempdir().map_err(|e| ConfigError::invalid("T", e.to_string()))?;
        let path = dir.path().join("token");
        std::fs::write(&path, "s3cret\n").map_err(|e| ConfigError::invalid("T", e.to_string()))?;
        let path = path.display().to_string();
        let vars = files(&[
            ("CHAT_APPLICATION_BOT_TOKEN_FILE", &path),
            ("KEEL_SMTP_PASSWORD_FILE", &path),
        ])?;
        assert_eq!(vars["CHAT_APPLICATION_BOT_TOKEN"], "s3cret");
        assert_eq!(vars["KEEL_SMTP_PASSWORD"], "s3cret");
        let vars = files(&[("SSL_CERT_FILE", &path), ("KEEL_CONFIG_FILE", &path)])?;
        assert!(!vars.contains_key("SSL_CERT") && !vars.contains_key("KEEL_CONFIG"));
        Ok(())
    }

    #[test]
    fn a_secret_set_twice_or_an_unreadable_file_is_refused_without_its_value() {
        let err = files(&[
            ("DATABASE_URL", "postgres://u:pw@h/db"),
            ("DATABASE_URL_FILE", "/x"),
        ])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(
            err.contains("DATABASE_URL_FILE") && !err.contains("pw"),
            "{err}"
        );
        let err = files(&[("DATABASE_URL_FILE", "/nonexistent/secret")])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("/nonexistent/secret"), "{err}");
    }

    #[test]
    fn lists_split_on_commas_and_trim() {
        let s = Source::from_pairs([("L", " a, b ,,c ")]);
        assert_eq!(s.list("L"), vec!["a", "b", "c"]);
    }

    #[test]
    fn the_file_is_read_with_upper_cased_keys_and_env_wins() -> Result<(), ConfigError> {
        let dir = tempfile::tempdir().map_err(|e| ConfigError::invalid("T", e.to_string()))?;
        let path = dir.path().join("keel.toml");
        std::fs::write(&path, "keel_a = 1\nKEEL_B = [\"x\", \"y\"]\n")
            .map_err(|e| ConfigError::invalid("T", e.to_string()))?;
        let mut vars = read_file(&path)?;
        assert_eq!(vars.get("KEEL_A").map(String::as_str), Some("1"));
        assert_eq!(vars.get("KEEL_B").map(String::as_str), Some("x,y"));
        vars.extend([("KEEL_A".to_owned(), "2".to_owned())]);
        assert_eq!(vars.get("KEEL_A").map(String::as_str), Some("2"));
        Ok(())
    }
}
