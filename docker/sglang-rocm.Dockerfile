# SGLang's server on AMD GPUs: the lmsysorg/sglang ROCm 6.3 image AMD's docs benchmark with, pinned by digest,
# re-labelled and run as a non-root user. GPUs reach the container as /dev/kfd + /dev/dri.
# The image is used as it is published: tcobench adds a non-root user, its labels and the entrypoint its recipe
# (tasks/engine/recipes/sglang.py) passes arguments to. Classic builder only (docker SDK): no BuildKit syntax.

# Pin: lmsysorg/sglang v0.4.5-rocm630 (ROCm 6.3.0, SGLang 0.4.5), linux/amd64 image digest.
# Source: AMD's ROCm docs data, as forked in prbasyal-amd/ROCm, docs/data/how-to/rocm-for-ai/inference/
# sglang-benchmark-models.yaml lines 4-5 (pull_tag, docker_hub_url), commit 82221c4e2d2fb3ba2498025ce0b9accfbc36211c.
ARG BASE_IMAGE=lmsysorg/sglang:v0.4.5-rocm630@sha256:63d2cb760a237125daf6612464cfe2f395c0784e21e8b0ea37d551cd10d3c951
FROM ${BASE_IMAGE}

# The engine version inside the pinned image (the image tag tcobench gives its build).
ARG SGLANG_VERSION=0.4.5

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
ENTRYPOINT ["python3", "-m", "sglang.launch_server"]
CMD ["--help"]

# Re-declared: an ARG before FROM is not visible after it unless named again.
ARG BASE_IMAGE
ARG BASE_DIGEST=unknown
ARG ARCHIVE_SHA256=unknown
ARG BUILD_TIME=unknown
ARG GIT_REVISION=unknown
ARG SPEC_HASH=unknown
ARG IMAGE_NAME=sglang-rocm
LABEL org.opencontainers.image.title="tcobench SGLang (ROCm)" \
      org.opencontainers.image.description="SGLang's ROCm image (as in AMD's docs), pinned by digest" \
      org.opencontainers.image.version="${SGLANG_VERSION}" \
      org.opencontainers.image.created="${BUILD_TIME}" \
      org.opencontainers.image.revision="${GIT_REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="${BASE_IMAGE}" \
      org.opencontainers.image.base.digest="${BASE_DIGEST}" \
      io.tcobench.engine="sglang" \
      io.tcobench.engine-version="${SGLANG_VERSION}" \
      io.tcobench.vendor="amd" \
      io.tcobench.base-digest="${BASE_DIGEST}" \
      io.tcobench.archive-sha256="${ARCHIVE_SHA256}" \
      io.tcobench.build-time="${BUILD_TIME}" \
      io.tcobench.git-revision="${GIT_REVISION}" \
      io.tcobench.spec-hash="${SPEC_HASH}" \
      io.tcobench.image-name="${IMAGE_NAME}"
