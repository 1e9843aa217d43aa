package memory

// Counts returns how many rows each collection of the store holds, so a
// test can tell that a request wrote nothing (deleted documents are still
// counted: they are kept as tombstones).
func (s *Store) Counts() map[string]int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := &s.state
	return map[string]int{
		"platforms": len(st.platforms), "credentials": len(st.credentials), "customers": len(st.customers),
		"internal_accounts": len(st.accounts), "auth_methods": len(st.authMethods),
		"external_accounts": len(st.externals), "transactions": len(st.txns), "jobs": len(st.jobs),
		"lookups": len(st.lookups), "quotes": len(st.quotes), "beneficial_owners": len(st.kyc.owners),
		"verifications": len(st.kyc.verifications), "documents": len(st.kyc.documents), "events": len(st.kyc.events),
		"agents": len(st.agents), "agent_device_codes": len(st.deviceCodes), "agent_actions": len(st.agentActions),
	}
}

// Counts returns the number of journal entries (events, the one outbox,
// are the Store's).
func (l *Ledger) Counts() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return map[string]int{"journal_entries": len(l.journal)}
}

// Len returns the number of idempotency records held.
func (s *IdempotencyStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.recs)
}
