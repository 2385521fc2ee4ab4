# The glance-krm-controller image: the static binary on scratch, non-root.
FROM scratch
COPY build/image/passwd /etc/passwd
COPY build/image/group /etc/group
COPY bin/glance-krm-controller /usr/local/bin/glance-krm-controller
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/glance-krm-controller"]
