# The services' image, built offline by `make images` (deploy/images/build.sh):
# one static cairn binary (CGO_ENABLED=0) on an empty base, run as uid 65532.
# The context is prepared by build.sh: cairn, the host's CA bundle (for the
# providers' HTTPS), and empty data/tmp directories with their owners.
FROM scratch
ADD fs.tar /
USER 65532:65532
ENV TMPDIR=/tmp
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/cairn"]
CMD ["--help"]
