package testenv

import (
	"fmt"
	"testing"
	"time"
)

// Eventually calls check every interval until it passes, and fails the
// test with check's last error once limit has passed.
func Eventually(t testing.TB, limit, interval time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			recordFailure(t.Name(), fmt.Sprintf("%s: %v", what, err))
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(interval)
	}
}
