# SGLang's server on NVIDIA GPUs: the official lmsysorg/sglang image (CUDA 13), pinned by digest, re-labelled and
# run as a non-root user. The NVIDIA container toolkit mounts the driver.
# The image is used as it is published: tcobench adds a non-root user, its labels and the entrypoint its recipe
# (tasks/engine/recipes/sglang.py) passes arguments to. Classic builder only (docker SDK): no BuildKit syntax.

# Pin: lmsysorg/sglang v0.5.14-cu130, image digest.
# Source: SemiAnalysisAI/InferenceX, benchmarks/multi_node/srt-slurm-recipes/sglang/deepseek-v4/8k1k/
# disagg-gb300-1p1d-tp4-tp4-2-c1.yaml line 36 (`container:`), commit 843c6254ff69b567f772f6a5fd97675af3d04431.
ARG BASE_IMAGE=lmsysorg/sglang:v0.5.14-cu130@sha256:5027e95bf6ec536856b1b52a91d1f35ff5c564ab83e8a94758a169ff09bb8df3
FROM ${BASE_IMAGE}

# The engine version inside the pinned image (the image tag tcobench gives its build).
ARG SGLANG_VERSION=0.5.14

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
ENTRYPOINT ["python3", "-m", "sglang.launch_server"]
CMD ["--help"]

# Re-declared: an ARG before FROM is not visible after it unless named again.
ARG BASE_IMAGE
ARG BASE_DIGEST=unknown
ARG ARCHIVE_SHA256=unknown
ARG BUILD_TIME=unknown
ARG GIT_REVISION=unknown
ARG SPEC_HASH=unknown
ARG IMAGE_NAME=sglang-cuda
LABEL org.opencontainers.image.title="tcobench SGLang (CUDA)" \
      org.opencontainers.image.description="SGLang's server image (CUDA 13), pinned by digest" \
      org.opencontainers.image.version="${SGLANG_VERSION}" \
      org.opencontainers.image.created="${BUILD_TIME}" \
      org.opencontainers.image.revision="${GIT_REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="${BASE_IMAGE}" \
      org.opencontainers.image.base.digest="${BASE_DIGEST}" \
      io.tcobench.engine="sglang" \
      io.tcobench.engine-version="${SGLANG_VERSION}" \
      io.tcobench.vendor="nvidia" \
      io.tcobench.base-digest="${BASE_DIGEST}" \
      io.tcobench.archive-sha256="${ARCHIVE_SHA256}" \
      io.tcobench.build-time="${BUILD_TIME}" \
      io.tcobench.git-revision="${GIT_REVISION}" \
      io.tcobench.spec-hash="${SPEC_HASH}" \
      io.tcobench.image-name="${IMAGE_NAME}"
