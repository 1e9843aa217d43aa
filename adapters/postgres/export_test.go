package postgres

// JournalLockKey lets tests hold the journal lock to line up races between
// writers.
const JournalLockKey = journalLock
