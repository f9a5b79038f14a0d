//! Test kit (filled in below).
