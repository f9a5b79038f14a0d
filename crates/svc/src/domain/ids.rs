//! The ids svc's paths carry, parsed at the edge (a malformed one is the
//! id of nothing: the route answers its own not-found).

use keel_platform::values::is_uuid;

use super::forms::valid_form_id;

keel_platform::path_id!(
    /// A form's id: `^\d+(?::(?:\d+|[a-f0-9-]{36}))?$`, at most 100 characters.
    pub FormId,
    valid_form_id
);

keel_platform::path_id!(
    /// A send's id (a UUID).
    pub SendId,
    is_uuid
);

keel_platform::path_id!(
    /// An application password's id (a UUID).
    pub AppPasswordId,
    is_uuid
);
