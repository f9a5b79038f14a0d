//! The push API: device registration (public), sending, statistics and
//! the device list as CSV (admin), delivered through Expo.

pub mod deliver;
pub mod devices;
pub mod expo;
pub mod routes;
pub mod send;
pub mod stats;
pub mod transfer;
