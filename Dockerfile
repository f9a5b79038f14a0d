# The keel binary in a small, non-root runtime image.
#   docker build -t keel .
#   docker run --rm keel quotebot          (the bot; see deploy/compose.yaml)
#   docker run --rm keel serve             (the HTTP services)
#
# Build arguments (the defaults are the public images; scripts/container-test
# substitutes stand-ins built from Debian packages where no registry is
# reachable, and builds everything else from this same file):
#   RUST_IMAGE     the build stage's toolchain image
#   RUNTIME_IMAGE  the runtime base: glibc, CA certificates, a `nonroot`
#                  user 65532, no shell
#   KEEL_BINARY    `source` (default): build keel here from the repository;
#                  `prebuilt`: take deploy/prebuilt/keel, built beforehand on
#                  a Debian 12 host with `cargo build --profile dist -p keel`,
#                  and deploy/prebuilt/data (an empty directory)
#   LITESTREAM_IMAGE where Litestream comes from (its official image, pinned):
#                  keel runs it to replicate the embedded database when
#                  KEEL_REPLICA_URL is set (docs/operations.md)
# BuildKit builds only the stages the chosen binary needs.
ARG RUST_IMAGE=rust:1.94-bookworm
ARG RUNTIME_IMAGE=gcr.io/distroless/cc-debian12:nonroot
ARG KEEL_BINARY=source
ARG LITESTREAM_IMAGE=litestream/litestream:0.5.17

# Build stage: the workspace's pinned toolchain floor (rust-version 1.94);
# web assets are committed, so the build needs neither npm nor the network
# beyond the Rust package registry.
FROM ${RUST_IMAGE} AS source
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --profile dist --locked -p keel \
    && cp target/dist/keel /usr/local/bin/keel \
    && mkdir -p /var/lib/keel

FROM scratch AS prebuilt
COPY deploy/prebuilt/keel /usr/local/bin/keel
COPY deploy/prebuilt/data /var/lib/keel

FROM ${KEEL_BINARY} AS binary

FROM ${LITESTREAM_IMAGE} AS litestream

# Runtime: distroless glibc base (CA certificates, no shell, no package
# manager), running as uid 65532 ("nonroot").
FROM ${RUNTIME_IMAGE}
COPY --from=binary /usr/local/bin/keel /usr/local/bin/keel
# Litestream, a static binary: keel's child while the database is replicated.
COPY --from=litestream /usr/local/bin/litestream /usr/local/bin/litestream
# The embedded SQLite default writes here; owned by the runtime user, so a
# named volume mounted here starts owned by it too.
COPY --from=binary --chown=65532:65532 /var/lib/keel /var/lib/keel
WORKDIR /var/lib/keel
# Every service in its production mode: usage-alerts verifies identity
# tokens (and so needs KEEL_APPLE_AUDIENCES to start); accounts sends mail
# over SMTP (and so needs KEEL_SMTP_URL, or KEEL_MAIL_TO_FILES=true).
ENV KEEL_DATA_DIR=/var/lib/keel \
    KEEL_ENV=production \
    KEEL_USAGE_ALERTS_ENV=production \
    PORT=3000
USER 65532:65532
EXPOSE 3000
VOLUME ["/var/lib/keel"]
# quotebot's liveness on $PORT (keel probe reads PORT and HOST): no
# dependencies, so a short database or Redis outage does not get the
# container replaced. The HTTP services override it with their own
# /healthz (deploy/compose.yaml).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["/usr/local/bin/keel", "probe"]
ENTRYPOINT ["/usr/local/bin/keel"]
CMD ["quotebot"]
