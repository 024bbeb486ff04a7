# vLLM's OpenAI-compatible server on AMD GPUs: AMD's rocm/vllm image, pinned by digest, re-labelled and run as a
# non-root user. GPUs reach the container as /dev/kfd + /dev/dri with numeric group ids (tcobench adds them).
# The image is used as it is published: tcobench adds a non-root user, its labels and the entrypoint its recipe
# (tasks/engine/recipes/vllm.py) passes arguments to. Classic builder only (docker SDK): no BuildKit syntax.

# Pin: rocm/vllm rocm7.0.0_vllm_0.11.2_20251210 (ROCm 7.0.0, vLLM 0.11.2, PyTorch 2.9.0), linux/amd64 image digest.
# Source: AMD's ROCm docs, vllm-history.rst (tag line 19, Docker Hub digest line 26), as copied in
# roboalchemist/llm-code-docs, docs/github-scraped/rocm/how-to/rocm-for-ai/inference/benchmark-docker/previous-versions/
# vllm-history.rst, commit 9076a6ad0e18523dec1efed531c435bb0f82e9d6.
ARG BASE_IMAGE=rocm/vllm:rocm7.0.0_vllm_0.11.2_20251210@sha256:e7f02dd2ce3824959658bc0391296f6158638e3ebce164f6c019c4eca8150ec7
FROM ${BASE_IMAGE}

# The engine version inside the pinned image (the image tag tcobench gives its build).
ARG VLLM_VERSION=0.11.2

USER root
RUN (getent passwd 10001 >/dev/null || useradd --system --uid 10001 --user-group --create-home \
        --home-dir /home/engine --shell /usr/sbin/nologin engine) \
    && mkdir -p /models /home/engine/.cache \
    && chown -R 10001:10001 /models /home/engine

ENV HOME=/home/engine \
    HF_HOME=/home/engine/.cache/huggingface \
    HF_HUB_OFFLINE=1 \
    VLLM_NO_USAGE_STATS=1 \
    DO_NOT_TRACK=1
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
ARG IMAGE_NAME=vllm-rocm
LABEL org.opencontainers.image.title="tcobench vLLM (ROCm)" \
      org.opencontainers.image.description="AMD's ROCm vLLM image, pinned by digest" \
      org.opencontainers.image.version="${VLLM_VERSION}" \
      org.opencontainers.image.created="${BUILD_TIME}" \
      org.opencontainers.image.revision="${GIT_REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="${BASE_IMAGE}" \
      org.opencontainers.image.base.digest="${BASE_DIGEST}" \
      io.tcobench.engine="vllm" \
      io.tcobench.engine-version="${VLLM_VERSION}" \
      io.tcobench.vendor="amd" \
      io.tcobench.base-digest="${BASE_DIGEST}" \
      io.tcobench.archive-sha256="${ARCHIVE_SHA256}" \
      io.tcobench.build-time="${BUILD_TIME}" \
      io.tcobench.git-revision="${GIT_REVISION}" \
      io.tcobench.spec-hash="${SPEC_HASH}" \
      io.tcobench.image-name="${IMAGE_NAME}"
