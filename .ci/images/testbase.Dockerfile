# The test base: a stand-in for python:3.11-slim, which can't be pulled where image registries are out of
# reach. Debian bookworm, as debootstrap builds it and `podman import` names it localhost/debian:bookworm,
# plus Debian's Python 3.11. As in the official image, `python` and `pip` are on PATH in /usr/local and pip
# installs there as root (a venv, so Debian's "externally managed" guard doesn't apply).
ARG DEBIAN_IMAGE=localhost/debian:bookworm
FROM ${DEBIAN_IMAGE}
ENV LANG=C.UTF-8
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && python3 -m venv /usr/local \
 && python --version && pip --version
CMD ["python3"]
