# The keel binary in a small, non-root runtime image.
#   docker build -t keel .
#   docker run --rm keel quotebot          (the bot; see deploy/compose.yaml)
#   docker run --rm keel serve             (the HTTP services)
# Build stage: the workspace's pinned toolchain floor (rust-version 1.94);
# web assets are committed, so the build needs neither npm nor the network
# beyond crates.io.
FROM rust:1.94-bookworm AS build
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --profile dist --locked -p keel \
    && cp target/dist/keel /usr/local/bin/keel \
    && mkdir -p /var/lib/keel

# Runtime: distroless glibc base (CA certificates, no shell, no package
# manager), running as uid 65532 ("nonroot").
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /usr/local/bin/keel /usr/local/bin/keel
# The embedded SQLite default writes here; owned by the runtime user.
COPY --from=build --chown=65532:65532 /var/lib/keel /var/lib/keel
WORKDIR /var/lib/keel
ENV KEEL_DATA_DIR=/var/lib/keel \
    PORT=3000
USER nonroot:nonroot
EXPOSE 3000
# quotebot's liveness: no dependencies, so a short database or Redis
# outage does not get the container replaced. The HTTP services override
# it with their own /healthz (deploy/compose.yaml).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["/usr/local/bin/keel", "probe", "http://127.0.0.1:3000/api/health/live"]
ENTRYPOINT ["/usr/local/bin/keel"]
CMD ["quotebot"]
