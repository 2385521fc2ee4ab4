# The Argo CD config-management-plugin sidecar: kustomize, glance-krm-fn
# and the plugin configuration, with a static busybox for the plugin's sh -c
# commands. Argo CD mounts its own argocd-cmp-server binary into the pod.
# `make image` stages build/argocd-cmp/ from the pinned kustomize, Debian's
# busybox-static and the function binary.
FROM scratch
COPY build/image/passwd /etc/passwd
COPY build/image/group /etc/group
COPY build/argocd-cmp/rootfs/ /
COPY bin/glance-krm-fn /usr/local/bin/glance-krm-fn
COPY examples/argocd/plugin.yaml /home/argocd/cmp-server/config/plugin.yaml
ENV PATH=/usr/local/bin:/bin
USER 999:999
WORKDIR /home/argocd
