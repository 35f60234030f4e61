# syntax=docker/dockerfile:1
#
# docker build -t tablo .
# docker run --rm -p 10000-10002:10000-10002 -p 10010:10010 -v tablo-data:/data tablo
#
# Build stage: a static binary (no cgo), version stamped from the build arguments.
FROM golang:1.25 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=devel
ARG COMMIT=
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/tablo/tablo/internal/buildinfo.version=${VERSION} -X github.com/tablo/tablo/internal/buildinfo.commit=${COMMIT}" \
      -o /out/tablo ./cmd/tablo \
 && mkdir -p /out/data

# Run stage: nothing but the binary, its licence and an empty /data owned by the
# unprivileged user (distroless "nonroot", uid 65532).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/tablo /usr/local/bin/tablo
COPY LICENSE THIRD_PARTY_LICENSES.md /usr/share/doc/tablo/
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
VOLUME /data
# Blob 10000, Queue 10001, Table 10002, admin (health, metrics) 10010.
EXPOSE 10000 10001 10002 10010
# Inside a container the services must listen on every interface to be reachable through -p
# (the admin listener too: it has no authentication, so publish 10010 only where its
# reset/snapshot endpoints may be reached).
ENV TABLO_HOST=0.0.0.0 \
    TABLO_ADMIN_HOST=0.0.0.0 \
    TABLO_DATA_DIR=/data \
    TABLO_LOG_FORMAT=json
# distroless has no shell or curl; the binary checks itself (GET /healthz on the admin port).
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["/usr/local/bin/tablo", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/tablo"]
CMD ["serve"]
