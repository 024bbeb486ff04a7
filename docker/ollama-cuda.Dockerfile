# Ollama on the NVIDIA CUDA runtime, from Ollama's release archive checked against a pinned sha256.
#
# The archive (.tar.zst since v0.14) carries the ollama binary and its CUDA runners under lib/ollama;
# the base image supplies the CUDA user-space libraries, the NVIDIA container toolkit mounts the driver.
# Classic builder only (docker SDK): no BuildKit syntax. Runs as a non-root user (uid 10001).

# Pin: nvidia/cuda 12.8.1 runtime on Ubuntu 24.04, linux/amd64 image digest.
# Source: ai-dynamo/dynamo, docs/support_matrix.md ("Base Container" links this digest on Docker Hub);
# the same pin is in public Dockerfiles (e.g. ninfer's runtime stage).
ARG BASE_IMAGE=nvidia/cuda:12.8.1-runtime-ubuntu24.04@sha256:828c4d878adcaa4265d80c95d8ec877149b49bb2419a4cf3bb6aa889bbb7ca2e
FROM ${BASE_IMAGE}

# Pin: Ollama v0.32.0, ollama-linux-amd64.tar.zst.
# Source: pypi-ahmad/grounded-docparse, scripts/wsl/setup-ollama.sh (BASE_SHA256), commit
# 9cde4cf54c799727f3d9e01adadae94c6409ea11; the same sha256 is pinned for v0.32.0 in other public recipes.
ARG OLLAMA_VERSION=0.32.0
ARG OLLAMA_SHA256=56362d7609dfa9e35aaebb7c9cab25605d8f0528ec3d5d585dc83d6642002bab

ENV DEBIAN_FRONTEND=noninteractive
RUN if [ -z "${OLLAMA_SHA256}" ]; then \
        echo "OLLAMA_SHA256 is empty: pass --build-arg OLLAMA_SHA256=<sha256 of ollama-linux-amd64.tar.zst v${OLLAMA_VERSION}, from that release's sha256sum.txt>" >&2; \
        exit 1; \
    fi \
    && apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl zstd \
    && curl -fsSL -o /tmp/ollama.tar.zst \
        "https://github.com/ollama/ollama/releases/download/v${OLLAMA_VERSION}/ollama-linux-amd64.tar.zst" \
    && echo "${OLLAMA_SHA256}  /tmp/ollama.tar.zst" | sha256sum -c - \
    && tar --zstd -xf /tmp/ollama.tar.zst -C /usr \
    && rm -f /tmp/ollama.tar.zst \
    && apt-get purge -y curl zstd \
    && apt-get autoremove -y \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --create-home --home-dir /home/ollama --shell /usr/sbin/nologin ollama \
    && mkdir -p /models \
    && chown 10001:10001 /models

ENV OLLAMA_MODELS=/models \
    OLLAMA_HOST=127.0.0.1:11434 \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility
USER 10001:10001
WORKDIR /home/ollama
ENTRYPOINT ["/usr/bin/ollama"]
CMD ["serve"]
# No curl in the image: the health check asks Ollama itself.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s CMD ["/usr/bin/ollama", "list"]

# Re-declared: an ARG before FROM is not visible after it unless named again.
ARG BASE_IMAGE
ARG BASE_DIGEST=unknown
ARG ARCHIVE_SHA256=unknown
ARG BUILD_TIME=unknown
ARG GIT_REVISION=unknown
ARG SPEC_HASH=unknown
ARG IMAGE_NAME=ollama-cuda
LABEL org.opencontainers.image.title="tcobench Ollama (CUDA)" \
      org.opencontainers.image.description="Ollama release archive on the NVIDIA CUDA runtime" \
      org.opencontainers.image.version="${OLLAMA_VERSION}" \
      org.opencontainers.image.created="${BUILD_TIME}" \
      org.opencontainers.image.revision="${GIT_REVISION}" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.base.name="${BASE_IMAGE}" \
      org.opencontainers.image.base.digest="${BASE_DIGEST}" \
      io.tcobench.engine="ollama" \
      io.tcobench.engine-version="${OLLAMA_VERSION}" \
      io.tcobench.vendor="nvidia" \
      io.tcobench.base-digest="${BASE_DIGEST}" \
      io.tcobench.archive-sha256="${OLLAMA_SHA256}" \
      io.tcobench.build-time="${BUILD_TIME}" \
      io.tcobench.git-revision="${GIT_REVISION}" \
      io.tcobench.spec-hash="${SPEC_HASH}" \
      io.tcobench.image-name="${IMAGE_NAME}"
