# Every image glance-krm ships, one stage each: `--target controller`,
# `--target argocd-cmp`, and the function, the last stage, which a build
# with no flags makes. Nothing compiles in here (no base image can be
# pulled where this is built, and every stage is scratch): `make build`
# writes the static binaries first, per platform under bin/linux_<arch>/,
# and `make image` stages the sidecar's busybox and kustomize, as release
# tools do. TARGETARCH is the platform being built, so
# `--platform linux/amd64,linux/arm64` builds both without emulation.
#
# Users: root, nonroot (65532), nobody (65534: what kustomize runs container
# functions as) and argocd (999: the uid Argo CD's sidecars run as).

# The runtime controller: the static binary, non-root.
FROM scratch AS controller
ARG TARGETARCH
LABEL org.opencontainers.image.source="https://github.com/c5c3/glance-krm" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.title="glance-krm-controller"
COPY build/image/passwd /etc/passwd
COPY build/image/group /etc/group
COPY bin/linux_${TARGETARCH}/glance-krm-controller /usr/local/bin/glance-krm-controller
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/glance-krm-controller"]

# The Argo CD config-management-plugin sidecar: kustomize, the function and
# the plugin's configuration, with a static busybox for the plugin's sh -c
# commands. Argo CD mounts its own argocd-cmp-server binary into the pod.
FROM scratch AS argocd-cmp
ARG TARGETARCH
LABEL org.opencontainers.image.source="https://github.com/c5c3/glance-krm" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.title="glance-krm-argocd-cmp"
COPY build/image/passwd /etc/passwd
COPY build/image/group /etc/group
COPY build/argocd-cmp/linux_${TARGETARCH}/rootfs/ /
COPY bin/linux_${TARGETARCH}/glance-krm-fn /usr/local/bin/glance-krm-fn
COPY examples/argocd/plugin.yaml /home/argocd/cmp-server/config/plugin.yaml
ENV PATH=/usr/local/bin:/bin
USER 999:999
WORKDIR /home/argocd

# The KRM function: the static binary, no shell.
FROM scratch AS fn
ARG TARGETARCH
LABEL org.opencontainers.image.source="https://github.com/c5c3/glance-krm" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.title="glance-krm-fn"
COPY build/image/passwd /etc/passwd
COPY build/image/group /etc/group
COPY bin/linux_${TARGETARCH}/glance-krm-fn /usr/local/bin/glance-krm-fn
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/glance-krm-fn"]
