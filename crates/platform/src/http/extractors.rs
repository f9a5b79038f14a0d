//! The macros that define each service's body and query extractors, so
//! every service reads its input the same way and answers its failures in
//! its own error shape (`http::input` reads the bodies).

/// Defines a service's typed body extractor: `$name<T>(pub T)`, read from
/// `$formats`, its failures rendered as `$error` (which must be
/// `From<InputError>`; every `ApiError` is).
#[macro_export]
macro_rules! body_extractor {
    ($(#[$meta:meta])* $vis:vis $name:ident, $error:ty, $formats:expr) => {
        $(#[$meta])*
        $vis struct $name<T>(pub T);

        impl<St, T> ::axum::extract::FromRequest<St> for $name<T>
        where
            St: Send + Sync,
            T: ::serde::de::DeserializeOwned,
        {
            type Rejection = $error;

            async fn from_request(req: ::axum::extract::Request, state: &St) -> Result<Self, $error> {
                $crate::http::input::read(req, state, $formats)
                    .await
                    .map(Self)
                    .map_err(<$error>::from)
            }
        }
    };
}

/// Defines a service's raw body extractor: `$name(pub Bytes)`, the body
/// within the route's limit, its failures (too large, unreadable) rendered
/// as `$error` (which must be `From<PlatformError>`; every `ApiError` is).
#[macro_export]
macro_rules! bytes_extractor {
    ($(#[$meta:meta])* $vis:vis $name:ident, $error:ty) => {
        $(#[$meta])*
        $vis struct $name(pub ::axum::body::Bytes);

        impl<St: Send + Sync> ::axum::extract::FromRequest<St> for $name {
            type Rejection = $error;

            async fn from_request(req: ::axum::extract::Request, state: &St) -> Result<Self, $error> {
                <::axum::body::Bytes as ::axum::extract::FromRequest<St>>::from_request(req, state)
                    .await
                    .map(Self)
                    .map_err(|r| {
                        <$error>::from($crate::http::PlatformError::from_rejection(
                            r.status(),
                            r.body_text(),
                        ))
                    })
            }
        }
    };
}

/// A query string extractor whose failures (a value of the wrong type, a
/// repeated parameter) are rendered as `$error`, in the service's shape.
#[macro_export]
macro_rules! query_extractor {
    ($(#[$meta:meta])* $vis:vis $name:ident, $error:ty) => {
        $(#[$meta])*
        $vis struct $name<T>(pub T);

        impl<St, T> ::axum::extract::FromRequestParts<St> for $name<T>
        where
            St: Send + Sync,
            T: ::serde::de::DeserializeOwned,
        {
            type Rejection = $error;

            async fn from_request_parts(
                parts: &mut ::axum::http::request::Parts,
                state: &St,
            ) -> Result<Self, $error> {
                <::axum::extract::Query<T> as ::axum::extract::FromRequestParts<St>>::from_request_parts(parts, state)
                    .await
                    .map(|q| Self(q.0))
                    .map_err(|r| {
                        <$error>::from($crate::http::PlatformError::from_rejection(
                            r.status(),
                            r.body_text(),
                        ))
                    })
            }
        }
    };
}

/// A service's extractors: `Body<T>`, read from `$formats` into its type,
/// `RawBody`, the bytes as sent, and `Params<T>`, the query string; failures
/// rendered as `$error`.
#[macro_export]
macro_rules! body_extractors {
    ($error:ty, $formats:expr) => {
        $crate::query_extractor!(
            /// The query string read into its type.
            pub Params,
            $error
        );
        $crate::body_extractor!(
            /// A body read into its type.
            pub Body,
            $error,
            $formats
        );
        $crate::bytes_extractor!(
            /// A body as sent (within the route's limit).
            pub RawBody,
            $error
        );
    };
}
