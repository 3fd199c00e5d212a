# The toolrunner, built offline by `make images`: a minimal Debian root made
# with debootstrap from Debian's packages (bash, coreutils, git, python3,
# because the agent's bash tool runs `bash -c`), plus the static cairn binary,
# run as uid 65532.
FROM scratch
ADD rootfs.tar /
ADD fs.tar /
USER 65532:65532
ENV CAIRN_WORKSPACE_ROOT=/workspaces HOME=/workspaces TMPDIR=/tmp
EXPOSE 9102
ENTRYPOINT ["/usr/local/bin/cairn"]
CMD ["toolrunner", "--http", ":9102"]
