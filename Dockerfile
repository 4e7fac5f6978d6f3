# syntax=docker/dockerfile:1
#
# The evalctl container image: a static (musl) evalctl on distroless, run as a
# non-root user. Published by .github/workflows/release.yml as
# ghcr.io/OWNER/evalctl:VERSION for linux/amd64 and linux/arm64 (one native
# build per platform).
#
#   docker build -t evalctl .
#   docker run --rm -v "$PWD:/work" evalctl validate config
#
# The image's working directory is /work: mount the config repo there. It has
# no shell; the entrypoint is evalctl itself.

ARG RUST_VERSION=1.95

# Build (the dist profile of Cargo.toml, as the release binaries): Alpine's Rust
# targets musl natively (x86_64- or aarch64-unknown-linux-musl,
# as the build platform is), and links statically by default.
FROM rust:${RUST_VERSION}-alpine AS build
# musl-dev: the C runtime the static link needs; gcc comes with the image.
RUN apk add --no-cache musl-dev
WORKDIR /src
# What the release binary is built from, and nothing else (.dockerignore).
COPY Cargo.toml Cargo.lock ./
COPY src ./src
# The service's OpenAPI document, compiled into the sandbox.
COPY reference/service-openapi.json ./reference/service-openapi.json
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --profile dist --locked --bin evalctl \
    && cp target/dist/evalctl /usr/local/bin/evalctl
# Refuse a binary that is not static (distroless/static has no libc): no
# program interpreter, no shared library needed.
RUN ! readelf --program-headers --dynamic /usr/local/bin/evalctl | grep -E 'INTERP|NEEDED' \
    && /usr/local/bin/evalctl --version

# Run: distroless/static has CA certificates (for HTTPS to the service), tzdata
# and a nonroot user (65532), and no shell or package manager.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /usr/local/bin/evalctl /usr/local/bin/evalctl
USER nonroot:nonroot
WORKDIR /work
ENTRYPOINT ["/usr/local/bin/evalctl"]
CMD ["--help"]
