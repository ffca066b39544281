# The cronscale operator image. Multi-stage: the build stage compiles TypeScript with the full
# dependency tree, then drops the dev dependencies; the final stage holds only dist/, the
# production node_modules and package.json, runs as 65532 and never writes outside /tmp (the
# chart mounts an emptyDir there and sets readOnlyRootFilesystem).
#
# BASE is any Node 24 image with a shell (RUN steps) and npm. The default is the public one; the
# local build (hack/docker/build-operator-image.sh) passes the locally assembled
# cronscale.local/node image, which needs no registry. Written for the classic builder as well
# as BuildKit: no RUN --mount, no heredocs.
ARG BASE=docker.io/library/node:24-bookworm-slim

FROM ${BASE} AS build
WORKDIR /src
# The dependency layer depends on the manifests only, so a source change reuses it. (Few
# layers: under the vfs storage driver every layer is a full copy of the file system.)
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
# Extra CA certificates (*.pem) npm should trust while installing, for networks that intercept
# TLS; the directory holds only a README unless a build puts certificates there. They live in
# this build stage only: the final stage never copies them.
COPY hack/docker/extra-ca/ /tmp/extra-ca/
# --ignore-scripts: nothing the build needs runs an install script, and no package code runs
# at install time. The npm cache goes to /tmp and is removed with the step.
RUN if ls /tmp/extra-ca/*.pem >/dev/null 2>&1; then \
      cat /tmp/extra-ca/*.pem >/tmp/extra-ca.pem && export NODE_EXTRA_CA_CERTS=/tmp/extra-ca.pem; \
    fi \
 && npm ci --ignore-scripts --no-audit --no-fund --cache /tmp/.npm \
 && rm -rf /tmp/.npm /tmp/extra-ca /tmp/extra-ca.pem
COPY src ./src
# The build bundles the operator's modules into one file after tsc (hack/build/bundle-operator.ts).
COPY hack/build ./hack/build
# What the final stage takes is gathered in /out, so that it is copied in one layer. The prune is
# --offline: it only removes, but online it would ask the registry about every optional
# platform package it does not install.
# src/cron reads the zone files (TZif) of the base image's tzdata: refuse a base without them.
RUN test -f /usr/share/zoneinfo/Europe/Berlin || { echo "BASE has no tzdata (/usr/share/zoneinfo)" >&2; exit 1; } \
 && npm run build \
 && npm prune --omit=dev --offline --ignore-scripts --no-audit --no-fund --cache /tmp/.npm \
 && rm -rf /tmp/.npm \
 && mkdir /out && mv package.json node_modules dist /out/

# Final stage. The metadata comes before the COPY: it is then cached across source changes (the
# classic builder runs a container per instruction, and under vfs each one copies the rootfs).
# Version and revision labels are given with `docker build --label` (one step, at the end).
FROM ${BASE}
LABEL org.opencontainers.image.title="cronscale" \
      org.opencontainers.image.description="Kubernetes operator for scheduled script tasks and managed commerce platforms" \
      org.opencontainers.image.licenses="Apache-2.0"
# HOME in /tmp: the only writable place under a read-only root file system.
ENV NODE_ENV=production HOME=/tmp
WORKDIR /app
USER 65532:65532
# Port 8080 serves /healthz, /readyz and /metrics (the chart declares it; no EXPOSE step).
ENTRYPOINT ["node", "dist/main.js"]
# Owned by root and not writable by the operator's user.
COPY --from=build /out /app
