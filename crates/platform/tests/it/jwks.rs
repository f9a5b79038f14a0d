use std::time::Duration;

use jsonwebtoken::{Algorithm, Validation};
use keel_platform::config::OutboundConfig;
use keel_platform::jwks::{JwksConfig, JwksVerifier, JwtError};
use keel_platform::outbound::HttpClient;
use keel_testkit::FakeJwks;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug)]
struct Claims {
    iss: String,
    aud: String,
    sub: String,
    exp: i64,
}

const ISS: &str = "https://issuer.example";
const AUD: &str = "com.example.app";

fn claims(exp_in_secs: i64) -> Claims {
    Claims {
        iss: ISS.into(),
        aud: AUD.into(),
        sub: "user-1".into(),
        exp: chrono::Utc::now().timestamp() + exp_in_secs,
    }
}

fn verifier(jwks: &FakeJwks, cooldown: Duration) -> JwksVerifier {
    let http = HttpClient::new(&OutboundConfig {
        timeout: Duration::from_secs(5),
        connect_timeout: Duration::from_secs(1),
        retries: 1,
        jwks_refetch_cooldown: cooldown,
    })
    .unwrap();
    JwksVerifier::new(
        http,
        JwksConfig {
            url: jwks.url(),
            algorithms: vec![Algorithm::RS256],
            max_age: Duration::from_secs(3600),
            refetch_cooldown: cooldown,
        },
    )
}

fn validation() -> Validation {
    let mut v = Validation::new(Algorithm::RS256);
    v.set_issuer(&[ISS]);
    v.set_audience(&[AUD]);
    v.leeway = 0;
    v
}

async fn verify(v: &JwksVerifier, token: &str) -> Result<Claims, JwtError> {
    v.verify::<Claims>(token, &validation())
        .await
        .map(|t| t.claims)
}

#[tokio::test]
async fn a_valid_token_verifies_and_the_keys_are_cached() {
    let jwks = FakeJwks::start().await;
    let v = verifier(&jwks, Duration::ZERO);
    for _ in 0..3 {
        let c = verify(&v, &jwks.sign("k1", &claims(60))).await.unwrap();
        assert_eq!(c.sub, "user-1");
    }
    assert_eq!(jwks.fetches(), 1, "keys fetched once while cached");
}

#[tokio::test]
async fn expired_wrong_issuer_and_wrong_audience_are_refused() {
    let jwks = FakeJwks::start().await;
    let v = verifier(&jwks, Duration::ZERO);
    assert!(matches!(
        verify(&v, &jwks.sign("k1", &claims(-10)))
            .await
            .unwrap_err(),
        JwtError::Expired
    ));
    let mut c = claims(60);
    c.iss = "https://evil.example".into();
    assert!(matches!(
        verify(&v, &jwks.sign("k1", &c)).await,
        Err(JwtError::Invalid(_))
    ));
    let mut c = claims(60);
    c.aud = "com.other.app".into();
    assert!(matches!(
        verify(&v, &jwks.sign("k1", &c)).await,
        Err(JwtError::Invalid(_))
    ));
}

#[tokio::test]
async fn alg_none_and_hs256_signed_with_the_public_key_are_refused() {
    let jwks = FakeJwks::start().await;
    let v = verifier(&jwks, Duration::ZERO);
    let none = jwks.sign_none("k1", &claims(60));
    assert!(verify(&v, &none).await.is_err());
    let confused = jwks.sign_hs256_with_public_key("k1", &claims(60));
    assert!(matches!(
        verify(&v, &confused).await.unwrap_err(),
        JwtError::AlgorithmNotAllowed
    ));
    assert!(verify(&v, "not-a-jwt").await.is_err());
}

#[tokio::test]
async fn a_forged_signature_is_refused() {
    let jwks = FakeJwks::start().await;
    let v = verifier(&jwks, Duration::ZERO);
    // Signed by k3 but claiming to be k1.
    let token = jwks.sign("k3", &claims(60));
    let (_, rest) = token.split_once('.').unwrap();
    let header = jwks.sign("k1", &claims(60));
    let forged = format!("{}.{rest}", header.split_once('.').unwrap().0);
    assert!(matches!(
        verify(&v, &forged).await,
        Err(JwtError::Invalid(_))
    ));
}

#[tokio::test]
async fn an_unknown_kid_triggers_a_refetch_that_finds_a_rotated_key() {
    let jwks = FakeJwks::start().await;
    let v = verifier(&jwks, Duration::ZERO);
    verify(&v, &jwks.sign("k1", &claims(60))).await.unwrap();
    jwks.publish(&["k1", "k2"]);
    verify(&v, &jwks.sign("k2", &claims(60))).await.unwrap();
    assert_eq!(jwks.fetches(), 2);
    // A key that is published nowhere stays unknown.
    assert!(matches!(
        verify(&v, &jwks.sign("k3", &claims(60))).await.unwrap_err(),
        JwtError::UnknownKid
    ));
}

#[tokio::test]
async fn refetches_for_unknown_kids_are_rate_limited() {
    let jwks = FakeJwks::start().await;
    let v = verifier(&jwks, Duration::from_secs(60));
    verify(&v, &jwks.sign("k1", &claims(60))).await.unwrap();
    for _ in 0..5 {
        assert!(matches!(
            verify(&v, &jwks.sign("k3", &claims(60))).await.unwrap_err(),
            JwtError::UnknownKid
        ));
    }
    assert_eq!(jwks.fetches(), 1, "no refetch inside the cooldown");
}

#[tokio::test]
async fn the_servers_cache_control_max_age_shortens_the_cache() {
    let jwks = FakeJwks::start().await;
    jwks.set_cache_control(Some("public, max-age=0"));
    let v = verifier(&jwks, Duration::ZERO);
    verify(&v, &jwks.sign("k1", &claims(60))).await.unwrap();
    verify(&v, &jwks.sign("k1", &claims(60))).await.unwrap();
    assert_eq!(jwks.fetches(), 2);
}

#[tokio::test]
async fn a_remembered_token_still_meets_the_validation_it_is_checked_against() {
    let jwks = FakeJwks::start().await;
    let v = verifier(&jwks, Duration::ZERO);
    let token = jwks.sign("k1", &claims(60));
    verify(&v, &token).await.unwrap();
    verify(&v, &token).await.unwrap();
    let mut other = validation();
    other.set_audience(&["com.other.app"]);
    assert!(
        v.verify::<Claims>(&token, &other).await.is_err(),
        "another audience"
    );
}

#[tokio::test]
async fn a_remembered_token_expires() {
    let jwks = FakeJwks::start().await;
    let v = verifier(&jwks, Duration::ZERO);
    let token = jwks.sign("k1", &claims(1));
    verify(&v, &token).await.unwrap();
    let expired = keel_testkit::eventually_async(Duration::from_secs(5), || async {
        matches!(verify(&v, &token).await.err(), Some(JwtError::Expired)).then_some(())
    })
    .await;
    assert!(expired.is_some(), "the remembered token expires");
}

#[tokio::test]
async fn a_remembered_token_of_a_withdrawn_key_is_refused() {
    let jwks = FakeJwks::start().await;
    jwks.set_cache_control(Some("max-age=0"));
    let v = verifier(&jwks, Duration::ZERO);
    let token = jwks.sign("k1", &claims(60));
    verify(&v, &token).await.unwrap();
    jwks.publish(&["k2"]);
    assert!(matches!(
        verify(&v, &token).await.unwrap_err(),
        JwtError::UnknownKid
    ));
}
