# vLLM's OpenAI-compatible server on NVIDIA GPUs: the official vllm/vllm-openai image, pinned by digest,
# re-labelled and run as a non-root user. The NVIDIA container toolkit mounts the driver (tcobench asks for GPUs
# with a device request).
# The image is used as it is published: tcobench adds a non-root user, its labels and the entrypoint its recipe
# (tasks/engine/recipes/vllm.py) passes arguments to. Classic builder only (docker SDK): no BuildKit syntax.

# Pin: vllm/vllm-openai v0.14.0 (CUDA, linux/amd64), the official OpenAI-compatible server image.
# Source: tinfoilsh/vllm-openai-audio, Dockerfile line 1 (`FROM vllm/vllm-openai:v0.14.0@sha256:1d6866b8...`), commit
# 51b771af57e7e8591085a2388c0ae7ad23e30b20.
ARG BASE_IMAGE=vllm/vllm-openai:v0.14.0@sha256:1d6866b87630d94f5e0cdae55ab5abb4ce0b03fcb84d9d10612f9d518d19d4fd
FROM ${BASE_IMAGE}

# The engine version inside the pinned image (the image tag tcobench gives its build).
ARG VLLM_VERSION=0.14.0

USER root
RUN (getent passwd 10001 >/dev/null || useradd --system --uid 10001 --user-group --create-home \
        --home-dir /home/engine --shell /usr/sbin/nologin engine) \
    && mkdir -p /models /home/engine/.cache \
    && chown -R 10001:10001 /models /home/engine

ENV HOME=/home/engine \
    HF_HOME=/home/engine/.cache/huggingface \
    HF_HUB_OFFLINE=1 \
    VLLM_NO_USAGE_STATS=1 \
    DO_NOT_TRACK=1 \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility
USER 10001:10001
WORKDIR /home/engine
ENTRYPOINT ["python3", "-m", "vllm.entrypoints.openai.api_server"]
CMD ["--help"]

# Re-declared: an ARG before FROM is not visible after it unless named again.
ARG BASE_IMAGE
ARG BASE_DIGEST=unknown
ARG ARCHIVE_SHA256=unknown
ARG BUILD_TIME=unknown
ARG GIT_REVISION=unknown
ARG SPEC_HASH=unknown
ARG IMAGE_NAME=vllm-cuda
LABEL org.opencontainers.image.title="tcobench vLLM (CUDA)" \
      org.opencontainers.image.description="vLLM's OpenAI server image (CUDA), pinned by digest" \
      org.opencontainers.image.version="${VLLM_VERSION}" \
      org.opencontainers.image.created="${BUILD_TIME}" \
      org.opencontainers.image.revision="${GIT_REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="${BASE_IMAGE}" \
      org.opencontainers.image.base.digest="${BASE_DIGEST}" \
      io.tcobench.engine="vllm" \
      io.tcobench.engine-version="${VLLM_VERSION}" \
      io.tcobench.vendor="nvidia" \
      io.tcobench.base-digest="${BASE_DIGEST}" \
      io.tcobench.archive-sha256="${ARCHIVE_SHA256}" \
      io.tcobench.build-time="${BUILD_TIME}" \
      io.tcobench.git-revision="${GIT_REVISION}" \
      io.tcobench.spec-hash="${SPEC_HASH}" \
      io.tcobench.image-name="${IMAGE_NAME}"
