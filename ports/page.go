package ports

// Position is also each listed row's own: the sort key a page is cut after.
func (a InternalAccount) Position() Position { return Position{CreatedAt: a.CreatedAt, ID: a.ID} }
func (a ExternalAccount) Position() Position { return Position{CreatedAt: a.CreatedAt, ID: a.ID} }
func (t Transaction) Position() Position     { return Position{CreatedAt: t.CreatedAt, ID: t.ID} }
func (c Customer) Position() Position        { return Position{CreatedAt: c.CreatedAt, ID: c.ID} }

// TrimPage cuts the extra row a List returns past limit (the row that
// tells there is more): it returns the page and, when there is more, the
// position after its last row (nil otherwise).
func TrimPage[T any](rows []T, limit int, pos func(T) Position) ([]T, *Position) {
	if len(rows) <= limit {
		return rows, nil
	}
	rows = rows[:limit]
	if limit == 0 {
		return rows, nil
	}
	next := pos(rows[limit-1])
	return rows, &next
}

// Scan walks every page of list, pageSize rows at a time, calling each
// with every row in order until each returns false, list fails, or the
// rows end.
func Scan[T any](pageSize int, list func(Page) ([]T, error), pos func(T) Position, each func(T) bool) error {
	page := Page{Limit: pageSize}
	for {
		rows, err := list(page)
		if err != nil {
			return err
		}
		rows, next := TrimPage(rows, pageSize, pos)
		for _, r := range rows {
			if !each(r) {
				return nil
			}
		}
		if next == nil {
			return nil
		}
		page.After = next
	}
}
