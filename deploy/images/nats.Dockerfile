# NATS, built offline by `make images` from the nats-server module pinned in
# go.mod (CGO_ENABLED=0), on an empty base, run as uid 65532.
FROM scratch
ADD fs.tar /
USER 65532:65532
EXPOSE 4222 6222 8222
ENTRYPOINT ["/usr/local/bin/nats-server"]
