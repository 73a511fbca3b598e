package sessionview

import (
	"iter"
	"testing"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

func ledgerEntries(t *testing.T, root, id string) iter.Seq2[contract.LifecycleReceipt, error] {
	t.Helper()
	return func(yield func(contract.LifecycleReceipt, error) bool) {
		for e, err := range ledger.ReadSince(statedir.ReceiptsPath(root, id), 0) {
			if !yield(e.Receipt, err) {
				return
			}
		}
	}
}
