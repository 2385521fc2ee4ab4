# The function image. Placeholder until the packaging issue: it copies the
# binary `make build` writes (base images cannot be pulled to compile here).
FROM scratch
COPY bin/glance-krm-fn /usr/local/bin/glance-krm-fn
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/glance-krm-fn"]
