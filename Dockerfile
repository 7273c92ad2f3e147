# keel-server as a container for Agones (docs/deploy.md). MIT licence, see LICENSE.
#
# Build stage: Debian 12's packages and keel-server built from this tree.
# Runtime stage: only the libraries keel-server links against, a non-root
# user, the UDP game port and the TCP metrics port, the recordings folder as
# a volume. The command line is the one tests/test_agones.c runs against
# Agones' local SDK server (with its paths and ports substituted):
# tests/deploy_facts.py reads ENTRYPOINT and CMD from this file.
FROM debian:12 AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake pkg-config libfixmath-dev libenet-dev libxxhash-dev libzstd-dev libsodium-dev \
      libmicrohttpd-dev libcurl4-openssl-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKEEL_BUILD_TESTS=OFF -DKEEL_BUILD_BENCH=OFF \
      -DKEEL_INSTALL=OFF \
 && cmake --build /build -j"$(nproc)" --target keel-server keel-token

FROM debian:12
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libenet7 libzstd1 libsodium23 libxxhash0 libmicrohttpd12 libcurl4 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /var/lib/keel --create-home keel \
 && mkdir -p /var/lib/keel/recordings \
 && chown keel:keel /var/lib/keel/recordings
COPY --from=build /build/keel-server /build/keel-token /usr/local/bin/
USER 10001
# the game (ENet over UDP) and --metrics (/metrics, /healthz, /readyz)
EXPOSE 7777/udp 9100/tcp
VOLUME /var/lib/keel/recordings
# keel-server drains on SIGTERM: clients told, the recording finished, exit 0 within 2 s
STOPSIGNAL SIGTERM
ENTRYPOINT ["keel-server"]
# The backend key comes from a mounted Secret; the public address and port
# from the GameServer (the SDK sidecar); a match ends 30 s after its last
# player left, or 60 s after its allocation when no player joined, and then
# Agones shuts the GameServer down.
CMD ["--agones", "--key", "/run/secrets/keel/backend.key", "--public", "agones", "--port", "7777", "--metrics", "0.0.0.0:9100", "--record", "/var/lib/keel/recordings/match.krec", "--empty-seconds", "30", "--join-seconds", "60", "--stats-json", "--stats-interval", "10"]
