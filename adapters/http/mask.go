package httpapi

// maskIdentifier is how a tax or identity number (SSN, ITIN, EIN, a
// passport number) is returned: five bullets and its last four characters,
// never more ("123-45-6789" → "•••••6789"), so the length is not told
// either; one of four characters or fewer is all bullets. Empty stays empty.
func maskIdentifier(id string) string {
	if id == "" {
		return ""
	}
	r := []rune(id)
	if len(r) <= 4 {
		return "•••••"
	}
	return "•••••" + string(r[len(r)-4:])
}
