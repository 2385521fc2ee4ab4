#!/usr/bin/env bash
# make bench: measures the function against its floors, in one run, and
# writes BENCHMARKS.md. Ratios, not absolute times: machines are shared.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE="${CACHE:-$HOME/.cache/glance-krm}"
KUSTOMIZE="${KUSTOMIZE_BIN:?run through make bench}"
FN="${GLANCE_KRM_FN:?run through make bench}"
COUNT="${BENCH_COUNT:-6}"
RUNS="${BENCH_RUNS:-15}"
LARGE_RUNS="${BENCH_LARGE_RUNS:-5}"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

benchstat="$CACHE/bin/benchstat"
[ -x "$benchstat" ] || GOBIN="$CACHE/bin" go install golang.org/x/perf/cmd/benchstat@latest

echo "== Go benchmarks (count $COUNT)" >&2
go test -run XXX -bench . -benchmem -count "$COUNT" ./fn/glancekrm/ > "$work/bench.txt"
"$benchstat" "$work/bench.txt" > "$work/benchstat.txt"

# median ns/op of one benchmark
median() { grep -E "^Benchmark$1-" "$work/bench.txt" | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }

sizes=(1 10 100 1000)
declare -A p f
rows=""
ms() { awk -v x="$1" 'BEGIN{printf "%.2f", x/1e6}'; }
for n in "${sizes[@]}"; do
  p[$n]=$(median "Process/glances=$n"); f[$n]=$(median "Floor/glances=$n"); w=$(median "FloorItemWriter/glances=$n")
  [ "$n" = 1000 ] && w1000=$w
  rows+="| $n | $(ms "${p[$n]}") | $(ms "${f[$n]}") | $(ratio "${p[$n]}" "${f[$n]}") | $(ms "$w") | $(ratio "${p[$n]}" "$w") |"$'\n'
done
growth_p=$(ratio "${p[1000]}" "${p[100]}"); growth_f=$(ratio "${f[1000]}" "${f[100]}")

# kustomize build with the function against the same output as static files,
# alternating, in one run.
gen_resources() { # dir glances backends-per-glance
  local dir=$1 g=$2 b=$3
  mkdir -p "$dir"
  : > "$dir/all.yaml"
  for ((i = 0; i < g; i++)); do
    cat >> "$dir/all.yaml" <<EOT
---
apiVersion: glance.openstack.c5c3.io/v1alpha1
kind: Glance
metadata: {name: glance-$i, namespace: openstack}
spec:
  openStackRelease: "2025.2"
  image: {repository: ghcr.io/c5c3/glance, tag: "2025.2"}
  database: {host: mariadb, database: glance, secretRef: {name: glance-$i-db}}
  cache: {servers: ["memcached:11211"]}
  keystoneEndpoint: http://keystone.openstack.svc:5000/v3
  serviceUser: {secretRef: {name: glance-$i-service-user}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: glance-$i, namespace: openstack}
spec:
  selector: {matchLabels: {app: glance-$i}}
  template:
    metadata: {labels: {app: glance-$i}}
    spec:
      containers: [{name: glance-api, image: "ghcr.io/c5c3/glance:2025.2", command: [glance-api]}]
EOT
    for ((j = 0; j < b; j++)); do
      def=false; [ "$j" = 0 ] && def=true
      cat >> "$dir/all.yaml" <<EOT
---
apiVersion: glance.openstack.c5c3.io/v1alpha1
kind: GlanceBackend
metadata: {name: glance-$i-store-$j, namespace: openstack}
spec: {glanceRef: {name: glance-$i}, type: S3, isDefault: $def, s3: {host: "https://s3-$j.example.com", bucket: images-$j, credentialsSecretRef: {name: s3-$j}}}
EOT
    done
  done
  printf 'resources: [all.yaml]\ntransformers: [fn.yaml]\n' > "$dir/kustomization.yaml"
  printf 'apiVersion: fn.glance.openstack.c5c3.io/v1alpha1\nkind: RenderGlanceConfig\nmetadata:\n  name: glance-krm\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: %s\n' "$FN" > "$dir/fn.yaml"
  mkdir -p "$dir.static" "$dir.identity"
  "$KUSTOMIZE" build --enable-alpha-plugins --enable-exec "$dir" > "$dir.static/all.yaml"
  printf 'resources: [all.yaml]\n' > "$dir.static/kustomization.yaml"
  # The identity floor: the same (rendered) objects through an exec
  # function that changes nothing, /bin/cat. What any exec function costs
  # in kustomize, whatever it does.
  cp "$dir.static/all.yaml" "$dir.identity/all.yaml"
  printf 'resources: [all.yaml]\ntransformers: [cat.yaml]\n' > "$dir.identity/kustomization.yaml"
  printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: identity\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: /bin/cat\n' > "$dir.identity/cat.yaml"
}
now() { date +%s%N; }
med() { printf '%s\n' "$@" | sort -n | awk '{x[NR]=$1} END {print x[int((NR+1)/2)]}'; }
msr() { awk -v x="$1" 'BEGIN{printf "%.0f", x/1e6}'; }
e2e() { # dir runs -> ratios over the identity floor and the static build, then the three medians (ms)
  local dir=$1 runs=$2 a=() i=() s=() t
  for ((k = 0; k < runs; k++)); do
    t=$(now); "$KUSTOMIZE" build --enable-alpha-plugins --enable-exec "$dir" > /dev/null; a+=($(( $(now) - t )))
    t=$(now); "$KUSTOMIZE" build --enable-alpha-plugins --enable-exec "$dir.identity" > /dev/null; i+=($(( $(now) - t )))
    t=$(now); "$KUSTOMIZE" build "$dir.static" > /dev/null; s+=($(( $(now) - t )))
  done
  local ma mi ms
  ma=$(med "${a[@]}"); mi=$(med "${i[@]}"); ms=$(med "${s[@]}")
  echo "$(ratio "$ma" "$mi") $(ratio "$ma" "$ms") $(msr "$ma") $(msr "$mi") $(msr "$ms") $(ratio "$mi" "$ms")"
}
echo "== kustomize end to end ($RUNS alternating runs each)" >&2
gen_resources "$work/small" 1 2
gen_resources "$work/large" 200 5
read -r small_ratio small_sratio small_fn small_id small_static small_id_static < <(e2e "$work/small" "$RUNS")
read -r large_ratio large_sratio large_fn large_id large_static large_id_static < <(e2e "$work/large" "$LARGE_RUNS")
# The function alone on the large input, to show which share of the
# difference is the function's and which is kustomize's plumbing.
{ printf 'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n'; "$KUSTOMIZE" build "$work/large.static" | sed 's/^/  /; s/^  ---$/-/' | sed '1s/^  /- /'; } > "$work/large-rl.yaml"
alone=()
for ((k = 0; k < LARGE_RUNS; k++)); do t=$(now); "$FN" < "$work/large-rl.yaml" > /dev/null; alone+=($(( $(now) - t ))); done
large_alone=$(printf '%s\n' "${alone[@]}" | sort -n | awk '{x[NR]=$1} END {printf "%.0f", x[int((NR+1)/2)]/1e6}')

echo "== sizes and start-up" >&2
fn_size=$(stat -c %s "$FN"); ctl_size=$(stat -c %s bin/glance-krm-controller)
img_size=$(bash -c 'source hack/containers/env.sh && podman image inspect --format "{{.Size}}" ghcr.io/c5c3/glance-krm-fn:dev' 2>/dev/null || echo 0)
empty='apiVersion: config.kubernetes.io/v1
kind: ResourceList
items: []'
# Start-up, side by side: the function, a KRM function that only parses
# and writes back through the SDK (kyaml), and a Go program that copies
# stdin to stdout (hack/floors/). Interleaved, medians of 100.
go build -trimpath -ldflags='-s -w' -o "$work/floor-copy" ./hack/floors/copy
go build -trimpath -ldflags='-s -w' -o "$work/floor-sdk" ./hack/floors/sdk
st_fn=(); st_sdk=(); st_copy=()
for ((k = 0; k < 100; k++)); do
  t=$(now); printf '%s\n' "$empty" | "$FN" > /dev/null; st_fn+=($(( $(now) - t )))
  t=$(now); printf '%s\n' "$empty" | "$work/floor-sdk" > /dev/null; st_sdk+=($(( $(now) - t )))
  t=$(now); printf '%s\n' "$empty" | "$work/floor-copy" > /dev/null; st_copy+=($(( $(now) - t )))
done
ms1() { awk -v x="$1" 'BEGIN{printf "%.1f", x/1e6}'; }
start_fn=$(med "${st_fn[@]}"); start_sdk=$(med "${st_sdk[@]}"); start_copy=$(med "${st_copy[@]}")
start_ratio=$(ratio "$start_fn" "$start_copy"); start_sdk_ratio=$(ratio "$start_fn" "$start_sdk"); sdk_copy_ratio=$(ratio "$start_sdk" "$start_copy")
# What the package initialisers cost (GODEBUG=inittrace=1): all of them,
# and those the API server's validator brings (krm/crds).
inits() { printf '%s\n' "$empty" | GODEBUG=inittrace=1 "$1" 2>&1 >/dev/null | awk -v re="${2:-.}" '$2 ~ re {s+=$5} END {printf "%.1f", s}'; }
init_fn=$(inits "$FN"); init_sdk=$(inits "$work/floor-sdk")
init_validator=$(inits "$FN" 'apiextensions|apiserver|component-base|prometheus|cel|kube-openapi|protobuf|gnostic|antlr|procfs|strfmt')

mb() { awk -v x="$1" 'BEGIN{printf "%.1f", x/1e6}'; }
verdict() { awk -v x="$1" -v lim="$2" 'BEGIN{print (x <= lim) ? "met" : "not met"}'; }
r1000=$(ratio "${p[1000]}" "${f[1000]}")
r1000w=$(ratio "${p[1000]}" "$w1000")
share=$(awk -v a="$large_alone" -v b="$large_fn" 'BEGIN{printf "%.0f", 100*a/b}')
# make bench-controller's section survives this rewrite.
controller_section="$(awk '/<!-- bench-controller:start -->/{p=1} p{print} /<!-- bench-controller:end -->/{p=0}' BENCHMARKS.md 2>/dev/null || true)"
cat > BENCHMARKS.md <<EOT
# Benchmarks

Written by \`make bench\` (\`hack/bench.sh\`) on $(date -u +%Y-%m-%d): $(nproc) cores,
$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(go version | cut -d' ' -f3),
kustomize $("$KUSTOMIZE" version 2>/dev/null | head -1). The machine is shared and noisy: read the
ratios, which compare runs made side by side in this one run, not the absolute times.

## Goals

| goal | measured | verdict |
| --- | --- | --- |
| Process <= 3x its floor (FloorItemWriter, the function's own writer) at 1,000 Glances | ${r1000w}x | $(verdict "$r1000w" 3) |
| 10x the objects <= 11x the time (100 -> 1,000 Glances) | ${growth_p}x | $(verdict "$growth_p" 11) |
| kustomize with the function <= 1.2x kustomize with an identity exec function (/bin/cat), 1 Glance | ${small_ratio}x | $(verdict "$small_ratio" 1.2) |
| kustomize with the function <= 1.1x kustomize with an identity exec function (/bin/cat), 200 Glances | ${large_ratio}x | $(verdict "$large_ratio" 1.1) |
| function start to exit on an empty ResourceList <= 2x an SDK function that changes nothing | ${start_sdk_ratio}x | $(verdict "$start_sdk_ratio" 2) |

Information, no goal: Process is ${r1000}x the SDK's own round trip
(Floor) at 1,000 Glances, and the function starts in ${start_ratio}x the
time of a Go program copying stdin to stdout.

The floor of an exec function in kustomize is kustomize itself: it
serializes its resources into a ResourceList, starts the process and
parses the answer back into its resource model, whatever the function
does. So the function is compared with the identity function \`/bin/cat\`
on the same objects (the function's own rendered output), which costs
exactly that plumbing. Against a static build of the same objects
(information, no goal) the function's build is ${small_sratio}x at 1
Glance and ${large_sratio}x at 200 Glances; the earlier goal of <= 1.3x
static is dropped, because the identity function alone is
${small_id_static}x and ${large_id_static}x static: no exec function can reach it.
On the 200-Glance input the function alone takes ${large_alone} ms
(${share}% of the ${large_fn} ms build).
At 1 Glance what the function adds over the identity function is paid
once per process: its start-up (below) and the first Glance's validator,
the API server's CEL compile of the rules under the fields the Glance sets
(parsing each rule with CEL's ANTLR parser, whose prediction cache starts
cold in every process, and an environment per rule). The validator keeps
the API server's code and compiles less and sooner: the rules under each
spec field are compiled on that field's own schema, in parallel on the
machine's cores and once per process, and the function starts the
validator (decoding the CRD, compiling the object's and spec's own rules)
while it parses an input that names our API group. What remains is kept
for the guarantee that every marker holds at build time as on admission;
at 200 Glances it vanishes in the total.

**Start-up**: $(ms1 "$start_fn") ms for the function, $(ms1 "$start_sdk") ms for an
SDK function that changes nothing, $(ms1 "$start_copy") ms for the copy program:
${start_ratio}x the copy, ${start_sdk_ratio}x the SDK function, whose own ratio
to the copy is ${sdk_copy_ratio}x. Package initialisers take ${init_fn} ms in the
function (GODEBUG=inittrace=1) and ${init_sdk} ms in the SDK function; ${init_validator} ms
of the function's are the packages of the API server's own validator
(apiextensions-apiserver, apiserver's CEL, component-base metrics,
Prometheus, kube-openapi, protobuf), which \`krm/crds\` links so that
every CRD rule is enforced at build time by the API server's code, in its
words. An empty input starts nothing in the background (the validator is
started only for an input that names our API group).

## The function against its floor (Go benchmarks)

\`go test -run XXX -bench . -benchmem -count $COUNT ./fn/glancekrm/\`, summarised with
benchstat. Process is the whole function (parse, validate, render, wire,
serialize); Floor is a kyaml parse and serialize of the same ResourceList
with no processing, through the SDK (\`fn.ParseResourceList\`,
\`ToYAML\`); FloorItemWriter is the same round trip through the function's
own writer (\`WriteResourceList\`: byte-identical output, each item encoded
as its own document, because go-yaml's emitter slows down superlinearly
with the size of one document). Each Glance has 5 GlanceBackends and a
Deployment.

| Glances | Process (ms) | Floor (ms) | Process / Floor | FloorItemWriter (ms) | Process / FloorItemWriter |
| ---: | ---: | ---: | ---: | ---: | ---: |
${rows}
Growth from 100 to 1,000 Glances (10x the objects): Process ${growth_p}x, Floor ${growth_f}x.

\`\`\`
$(cat "$work/benchstat.txt")
\`\`\`

## kustomize end to end

\`kustomize build --enable-alpha-plugins --enable-exec\` of a kustomization with the
function; of one holding its output as files with \`/bin/cat\` as exec
transformer (the identity floor); and \`kustomize build\` of the output as
static files (information), alternating, medians of $RUNS runs (1 Glance)
and $LARGE_RUNS runs (200 Glances).

| input | with the function (ms) | identity function (ms) | static (ms) | function / identity | function / static |
| --- | ---: | ---: | ---: | ---: | ---: |
| 1 Glance, 2 backends | $small_fn | $small_id | $small_static | $small_ratio | $small_sratio |
| 200 Glances, 1,000 backends | $large_fn | $large_id | $large_static | $large_ratio | $large_sratio |

The function alone on the same 200 Glances (its own output as input, run by
hand as \`glance-krm-fn < resourcelist.yaml\`): $large_alone ms of the $large_fn ms.

## Sizes and start-up

| what | value |
| --- | ---: |
| bin/glance-krm-fn (static, stripped) | $(mb "$fn_size") MB |
| bin/glance-krm-controller | $(mb "$ctl_size") MB |
| function image ghcr.io/c5c3/glance-krm-fn | $(mb "$img_size") MB |
| function start to exit on an empty ResourceList (median of 100) | $(ms1 "$start_fn") ms |
| SDK function that changes nothing (hack/floors/sdk), same loop | $(ms1 "$start_sdk") ms |
| Go program copying stdin to stdout (hack/floors/copy), same loop | $(ms1 "$start_copy") ms |
EOT
if [ -n "$controller_section" ]; then printf '\n%s\n' "$controller_section" >> BENCHMARKS.md; fi
echo "wrote BENCHMARKS.md" >&2
