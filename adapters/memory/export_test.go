package memory

import "github.com/corridorpay/corridor/ledger"

// StripHashesForTest removes every entry's hash, as someone editing the
// process's memory could.
func StripHashesForTest(l *Ledger) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.journal {
		l.journal[i].Hash, l.journal[i].PrevHash = ledger.ZeroHash, ledger.ZeroHash
	}
}

// ForgeForTest adds delta to the amount of the Single transfer transferID
// and to the posted counters of its two accounts, then re-chains the whole
// journal: a forgery consistent with itself. The transfer must be the last
// posting of both accounts.
func ForgeForTest(l *Ledger, transferID string, delta int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	found := false
	for i := range l.journal {
		ts := append([]ledger.Transfer(nil), l.journal[i].Transfers...)
		for j := range ts {
			if ts[j].ID != transferID {
				continue
			}
			found = true
			ts[j].Amount += delta
			debit, _ := l.book.Account(ts[j].DebitAccountID)
			credit, _ := l.book.Account(ts[j].CreditAccountID)
			debit.DebitsPosted += delta
			credit.CreditsPosted += delta
			l.book.PutAccount(debit)
			l.book.PutAccount(credit)
		}
		l.journal[i].Transfers = ts
	}
	prev := ledger.ZeroHash
	for i := range l.journal {
		l.journal[i].PrevHash = prev
		l.journal[i].Hash = ledger.Hash(prev, l.journal[i])
		prev = l.journal[i].Hash
	}
	return found
}
