package glancekrm

import (
	"fmt"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// The function's processing, and its floors: parsing and serializing the
// same ResourceList with no processing at all, through the SDK and through
// the function's own writer. `make bench` compares them with benchstat
// and writes BENCHMARKS.md.
var benchSizes = []int{1, 10, 100, 1000}

const benchBackends = 5

// benchEach runs one operation on generated inputs of every size.
func benchEach(b *testing.B, op func(in []byte) error) { benchInputs(b, true, op) }

func benchInputs(b *testing.B, workloads bool, op func(in []byte) error) {
	for _, n := range benchSizes {
		in := generatedInputOf(n, benchBackends, workloads)
		b.Run(fmt.Sprintf("glances=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if err := op(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkProcess(b *testing.B) {
	benchEach(b, func(in []byte) error { _, _, err := Transform(in); return err })
}

// BenchmarkProcessGenerating is BenchmarkProcess on the same Glances
// without their Deployments: the function generates each one's workload.
func BenchmarkProcessGenerating(b *testing.B) {
	benchInputs(b, false, func(in []byte) error { _, _, err := Transform(in); return err })
}

func BenchmarkFloor(b *testing.B) {
	benchEach(b, func(in []byte) error {
		rl, err := fn.ParseResourceList(in)
		if err == nil {
			_, err = rl.ToYAML()
		}
		return err
	})
}

// BenchmarkFloorItemWriter separates processing from serialization: the
// floor with the function's own writer.
func BenchmarkFloorItemWriter(b *testing.B) {
	benchEach(b, func(in []byte) error {
		rl, err := fn.ParseResourceList(in)
		if err == nil {
			_, err = WriteResourceList(rl)
		}
		return err
	})
}
