package glancekrm

import (
	"fmt"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// The function's processing, and its floor: parsing and serializing the
// same ResourceList with kyaml and no processing at all. `make bench`
// compares them with benchstat and writes BENCHMARKS.md.
var benchSizes = []int{1, 10, 100, 1000}

const benchBackends = 5

func BenchmarkProcess(b *testing.B) {
	for _, n := range benchSizes {
		in := generatedInput(n, benchBackends)
		b.Run(fmt.Sprintf("glances=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if _, _, err := Run(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkFloor(b *testing.B) {
	for _, n := range benchSizes {
		in := generatedInput(n, benchBackends)
		b.Run(fmt.Sprintf("glances=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				rl, err := fn.ParseResourceList(in)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := rl.ToYAML(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFloorItemWriter is the floor with the function's own writer
// (WriteResourceList), so the comparison separates processing from
// serialization.
func BenchmarkFloorItemWriter(b *testing.B) {
	for _, n := range benchSizes {
		in := generatedInput(n, benchBackends)
		b.Run(fmt.Sprintf("glances=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				rl, err := fn.ParseResourceList(in)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := WriteResourceList(rl); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
