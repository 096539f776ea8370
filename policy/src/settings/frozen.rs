//! The frozen form: the effective settings as JSON, handed to child
//! processes in `FSGUARD_POLICY`.

use super::{Error, Settings};

impl Settings {
    /// The frozen form passed to children.
    pub fn to_frozen(&self) -> String {
        serde_json::to_string(self).expect("settings serialize")
    }

    /// Reads the frozen form.
    pub fn from_frozen(s: &str) -> Result<Settings, Error> {
        serde_json::from_str(s).map_err(|e| Error::new(format!("FSGUARD_POLICY: {e}")))
    }
}
