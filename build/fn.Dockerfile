# The glance-krm function image: the static binary `make build` writes, on
# scratch, with /etc/passwd and /etc/group entries for nobody (65534; what
# kustomize runs container functions as) and nonroot (65532). No shell.
# Base images cannot be pulled where this is built, so nothing compiles in
# here: `make image` builds the binary first, as release tools do.
FROM scratch
COPY build/image/passwd /etc/passwd
COPY build/image/group /etc/group
COPY bin/glance-krm-fn /usr/local/bin/glance-krm-fn
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/glance-krm-fn"]
