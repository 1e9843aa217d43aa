package kyc

import "testing"

// Every field the table requires must be one the check can read: a typo
// would require a field nobody can provide (and panic on a nil getter).
func TestRegionTableNamesKnownFields(t *testing.T) {
	for _, r := range Regions {
		for _, path := range append(append([]string{}, r.Individual.Fields...), r.Business.Fields...) {
			if _, ok := customerFields[path]; !ok {
				t.Errorf("%s: unknown customer field %q", r.Name, path)
			}
		}
		for _, path := range r.Owner.Fields {
			if _, ok := ownerFields[path]; !ok {
				t.Errorf("%s: unknown owner field %q", r.Name, path)
			}
		}
		for _, s := range []Subject{r.Individual, r.Business, r.Owner} {
			for _, d := range s.Documents {
				if len(d.Accepted) == 0 || d.ErrorType == "" {
					t.Errorf("%s: document requirement %+v accepts nothing", r.Name, d)
				}
			}
		}
	}
	if len(Regions[len(Regions)-1].Jurisdictions) != 0 {
		t.Error("the last row must be the default (no jurisdictions)")
	}
}
