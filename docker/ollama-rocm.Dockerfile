# Ollama on ROCm: the base release archive plus the ROCm archive extracted over it, both checked against
# pinned sha256s (since v0.14 the -rocm archive holds only lib/ollama/rocm, so it needs the base archive).
# GPUs reach the container as /dev/kfd + /dev/dri with numeric group ids (tcobench adds them at run time).
# Classic builder only (docker SDK): no BuildKit syntax. Runs as a non-root user (uid 10001).

# Pin: rocm/dev-ubuntu-24.04 7.2.4 (runtime flavour, not -complete).
# Source: mattbucci/2x-R9700-RDNA4-GFX1201-sglang-inference, Dockerfile (ARG ROCM_RUNTIME_IMAGE), commit
# 501900c1de69e5f8ae51c018e8fce6401b9af4b0.
ARG BASE_IMAGE=rocm/dev-ubuntu-24.04:7.2.4@sha256:bdc8e61026cbb844ede93d44d2c50055f51ebb2041906b60182bf3bee3139054
FROM ${BASE_IMAGE}

# Pins: Ollama v0.32.0, ollama-linux-amd64.tar.zst and ollama-linux-amd64-rocm.tar.zst.
# Source: pypi-ahmad/grounded-docparse, scripts/wsl/setup-ollama.sh (BASE_SHA256, ROCM_SHA256), commit
# 9cde4cf54c799727f3d9e01adadae94c6409ea11.
ARG OLLAMA_VERSION=0.32.0
ARG OLLAMA_SHA256=56362d7609dfa9e35aaebb7c9cab25605d8f0528ec3d5d585dc83d6642002bab
ARG OLLAMA_ROCM_SHA256=f0fad39e184daab11d172a855580abd7338b2f049afa462435fee15d76b4e437

ENV DEBIAN_FRONTEND=noninteractive
RUN if [ -z "${OLLAMA_SHA256}" ] || [ -z "${OLLAMA_ROCM_SHA256}" ]; then \
        echo "OLLAMA_SHA256 and OLLAMA_ROCM_SHA256 are required: pass --build-arg with the sha256s of ollama-linux-amd64.tar.zst and ollama-linux-amd64-rocm.tar.zst v${OLLAMA_VERSION}, from that release's sha256sum.txt" >&2; \
        exit 1; \
    fi \
    && apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl zstd \
    && base="https://github.com/ollama/ollama/releases/download/v${OLLAMA_VERSION}" \
    && curl -fsSL -o /tmp/ollama.tar.zst "${base}/ollama-linux-amd64.tar.zst" \
    && curl -fsSL -o /tmp/ollama-rocm.tar.zst "${base}/ollama-linux-amd64-rocm.tar.zst" \
    && echo "${OLLAMA_SHA256}  /tmp/ollama.tar.zst" | sha256sum -c - \
    && echo "${OLLAMA_ROCM_SHA256}  /tmp/ollama-rocm.tar.zst" | sha256sum -c - \
    && tar --zstd -xf /tmp/ollama.tar.zst -C /usr \
    && tar --zstd -xf /tmp/ollama-rocm.tar.zst -C /usr \
    && rm -f /tmp/ollama.tar.zst /tmp/ollama-rocm.tar.zst \
    && apt-get purge -y curl zstd \
    && apt-get autoremove -y \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --create-home --home-dir /home/ollama --shell /usr/sbin/nologin ollama \
    && mkdir -p /models \
    && chown 10001:10001 /models

ENV OLLAMA_MODELS=/models \
    OLLAMA_HOST=127.0.0.1:11434
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
ARG IMAGE_NAME=ollama-rocm
LABEL org.opencontainers.image.title="tcobench Ollama (ROCm)" \
      org.opencontainers.image.description="Ollama release archives (base + ROCm) on ROCm" \
      org.opencontainers.image.version="${OLLAMA_VERSION}" \
      org.opencontainers.image.created="${BUILD_TIME}" \
      org.opencontainers.image.revision="${GIT_REVISION}" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.base.name="${BASE_IMAGE}" \
      org.opencontainers.image.base.digest="${BASE_DIGEST}" \
      io.tcobench.engine="ollama" \
      io.tcobench.engine-version="${OLLAMA_VERSION}" \
      io.tcobench.vendor="amd" \
      io.tcobench.base-digest="${BASE_DIGEST}" \
      io.tcobench.archive-sha256="${OLLAMA_SHA256}" \
      io.tcobench.rocm-archive-sha256="${OLLAMA_ROCM_SHA256}" \
      io.tcobench.build-time="${BUILD_TIME}" \
      io.tcobench.git-revision="${GIT_REVISION}" \
      io.tcobench.spec-hash="${SPEC_HASH}" \
      io.tcobench.image-name="${IMAGE_NAME}"
