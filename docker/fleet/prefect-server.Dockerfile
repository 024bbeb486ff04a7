# The Prefect server of a tcobench fleet (docker/compose.fleet.yaml): the same Prefect release the workers run.
#
# Why not an upstream prefecthq/prefect image: the digest-pinned ones found in public compose files were 3.7.8 and
# 3.8.4, older than the 3.9.1 tcobench is tested with, and a Prefect server must not be older than its clients.
# So this builds Prefect ${PREFECT_VERSION} from PyPI on the Debian base our engine images already pin.
# Classic builder only (no BuildKit syntax).

# Pin: debian:bookworm-slim (Python 3.11 from Debian, like the hosts tcobench is tested on).
# Source: dathagerty/website, Dockerfile (runtime stage), commit bdbbdb9fcb8f6a560ed66b020f8ac05575d4d481, line 26
# (FROM debian:bookworm-slim@sha256:7b140f37... AS runtime); the same pin as docker/llama-cpp-cpu.Dockerfile.
ARG BASE_IMAGE=debian:bookworm-slim@sha256:7b140f374b289a7c2befc338f42ebe6441b7ea838a042bbd5acbfca6ec875818
FROM ${BASE_IMAGE}

# Keep equal to (or newer than) the Prefect of every worker: tests/unit/test_compose_fleet.py checks it against
# the Prefect installed with tcobench.
ARG PREFECT_VERSION=3.9.1
ENV DEBIAN_FRONTEND=noninteractive

RUN apt-get update \
    && apt-get install -y --no-install-recommends python3-venv ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m venv /opt/prefect \
    && /opt/prefect/bin/pip install --no-cache-dir --upgrade pip \
    && /opt/prefect/bin/pip install --no-cache-dir "prefect==${PREFECT_VERSION}" \
    && /opt/prefect/bin/prefect version \
    && useradd --system --uid 10002 --user-group --home-dir /var/lib/prefect --create-home --shell /usr/sbin/nologin prefect

ENV PREFECT_HOME=/var/lib/prefect \
    PREFECT_SERVER_ANALYTICS_ENABLED=false \
    PATH=/opt/prefect/bin:$PATH
USER 10002:10002
EXPOSE 4200
LABEL org.opencontainers.image.title="tcobench-prefect-server" \
      org.opencontainers.image.version="${PREFECT_VERSION}" \
      org.opencontainers.image.base.name="${BASE_IMAGE}"
ENTRYPOINT ["/opt/prefect/bin/prefect", "server", "start", "--host", "0.0.0.0", "--port", "4200"]
